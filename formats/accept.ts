/**
 * The HTTP `Accept` header as WebOb reads it (RFC 7231 section 5.3.2), which
 * is how Gnocchi picks both a handler's media type and the form of an error
 * page. Libraries such as `negotiator` break ties between offers of equal
 * quality by the specificity of the range; WebOb keeps the offers' order, and
 * that order decides whether Gnocchi answers HTML, JSON or text.
 */

interface MediaRange {
  type: string;
  subtype: string;
  /** Parameters before `q`: a range with any names a variant our offers are not. */
  params: [string, string][];
  q: number;
}

const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const QUOTED = '"(?:[^"\\\\]|\\\\.)*"';
const PARAM_RE = new RegExp(`^\\s*(${TOKEN})\\s*=\\s*(${TOKEN}|${QUOTED})\\s*$`);
const RANGE_RE = new RegExp(`^(${TOKEN})/(${TOKEN})$`);
const QVALUE_RE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

/** The ranges of a header, or undefined when it does not parse (then every offer is acceptable). */
function parseAccept(header: string): MediaRange[] | undefined {
  const ranges: MediaRange[] = [];
  for (const element of header.split(',')) {
    if (element.trim() === '') continue;
    const [range, ...rawParams] = element.split(';');
    const m = RANGE_RE.exec(range!.trim());
    if (m === null) return undefined;
    const type = m[1]!.toLowerCase();
    const subtype = m[2]!.toLowerCase();
    if (type === '*' && subtype !== '*') return undefined;
    const params: [string, string][] = [];
    let q = 1;
    for (const raw of rawParams) {
      const p = PARAM_RE.exec(raw);
      if (p === null) return undefined;
      const name = p[1]!.toLowerCase();
      if (name === 'q') {
        if (!QVALUE_RE.test(p[2]!)) return undefined;
        q = Number(p[2]);
        break; // what follows q are extension parameters, not the media type's
      }
      params.push([name, p[2]!]);
    }
    ranges.push({ type, subtype, params, q });
  }
  return ranges;
}

/**
 * The offers the header accepts, best first: by quality, then in the order
 * given. An absent or unparsable header accepts every offer; an empty one none.
 * Each offer takes the quality of its most specific matching range.
 */
export function acceptableOffers(header: string | undefined, offers: readonly string[]): string[] {
  const ranges = header === undefined ? undefined : parseAccept(header);
  if (ranges === undefined) return [...offers];
  const rated: { offer: string; q: number }[] = [];
  for (const offer of offers) {
    const [type, subtype] = offer.toLowerCase().split('/') as [string, string];
    let best: { specificity: number; q: number } | undefined;
    for (const r of ranges) {
      let specificity: number;
      if (r.type === type && r.subtype === subtype) {
        // Offers carry no parameters: a range with some names another variant.
        if (r.params.length > 0) continue;
        specificity = 3;
      } else if (r.type === type && r.subtype === '*') specificity = 2;
      else if (r.type === '*') specificity = 1;
      else continue;
      if (best === undefined || specificity > best.specificity) best = { specificity, q: r.q };
    }
    if (best !== undefined && best.q > 0) rated.push({ offer, q: best.q });
  }
  // Array.prototype.sort is stable: equal qualities keep the offers' order.
  return rated.sort((a, b) => b.q - a.q).map((r) => r.offer);
}
