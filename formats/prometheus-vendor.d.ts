/** Types for `snappyjs` (pure-JS Snappy), which ships none. */
declare module 'snappyjs' {
  /** Throws when the input is not a Snappy block or would inflate beyond `maxLength` bytes. */
  export function uncompress(compressed: Uint8Array, maxLength?: number): Uint8Array;
  export function compress(uncompressed: Uint8Array): Uint8Array;
}
