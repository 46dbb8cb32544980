/**
 * lmdb-js's fast reads answer its shared read buffer, valid until the next
 * read (as the drivers' bytes are), with its `length` property set to the
 * value's, which copies and typed-array methods do not all heed.
 */

/** A plain view of the value in the shared read buffer. */
export function plainView(shared: Buffer | undefined): Buffer | undefined {
  return shared?.subarray(0, shared.length);
}
