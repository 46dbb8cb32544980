// The package ships no types: what test/server/self-metrics*.test.ts use of it.
declare module 'parse-prometheus-text-format' {
  export default function parsePrometheusTextFormat(text: string): unknown[];
}
