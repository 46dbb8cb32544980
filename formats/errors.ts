/**
 * Raised by the pure codecs and parsers of `formats/` when their input is
 * malformed. The message is the one Gnocchi gives for the same input, so the
 * server can pass it through unchanged in a 400 answer.
 */
export class FormatError extends Error {
  override readonly name = 'FormatError';
}
