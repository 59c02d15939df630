/** Columns padded to their widest cell, under a header line; one line per row. */
export function formatTable(header: string[], rows: (string | number | null)[][]): string {
  const cells = [header, ...rows.map((row) => row.map((cell) => (cell === null ? '-' : String(cell).replace(/\s*\n\s*/g, ' '))))];
  const widths = header.map((_, column) => Math.max(...cells.map((row) => row[column]!.length)));
  return cells.map((row) => row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd()).join('\n');
}
