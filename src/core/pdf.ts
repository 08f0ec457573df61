/**
 * What can be told of a PDF without parsing it. Here, below both the channel that checks a PDF
 * against the per-file page limit and the turn that counts what the documents shown together
 * cost, so both count pages the same way.
 */

/**
 * A PDF's page count read from its page objects (`/Type /Page`), without parsing the file; null
 * when none are visible, as in PDFs that keep their objects in compressed streams.
 */
export function pdfPageCount(bytes: Uint8Array): number | null {
  const matches = Buffer.from(bytes)
    .toString("latin1")
    .match(/\/Type\s*\/Page(?![A-Za-z])/g);
  return matches ? matches.length : null;
}
