/**
 * Fixture documents of the reader tests, made at test time (nothing binary is committed): a PDF of
 * pages of text lines (pdf-lib) and a DOCX of headings, a paragraph and a table (docx).
 */
import { Document, HeadingLevel, Packer, Paragraph, Table, TableCell, TableRow } from 'docx';
import { PDFDocument, StandardFonts } from 'pdf-lib';

/** A PDF with one page per entry of `pages`, each a list of text lines; optionally a document title. */
export async function pdfOf(pages: string[][], title?: string): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (const lines of pages) {
    const page = pdf.addPage([400, 300]);
    lines.forEach((line, i) => page.drawText(line, { x: 20, y: 250 - i * 20, size: 12, font }));
  }
  if (title !== undefined) pdf.setTitle(title);
  return pdf.save();
}

/**
 * A one-page PDF set in two columns (612 × 400 points, columns at x 36 and 324, 10-point Helvetica
 * on the same baselines, as a journal page is), under a title that runs across the gutter. The text
 * is written row by row (a left line, then the right line beside it), as many typesetters write it,
 * so PDF.js's own text order interleaves the columns.
 */
export async function twoColumnPdf(title: string, left: string[], right: string[]): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const page = pdf.addPage([612, 400]);
  page.drawText(title, { x: 36, y: 360, size: 16, font });
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    if (left[i] !== undefined) page.drawText(left[i], { x: 36, y: 320 - i * 13, size: 10, font });
    if (right[i] !== undefined) page.drawText(right[i], { x: 324, y: 320 - i * 13, size: 10, font });
  }
  return pdf.save();
}

/** A DOCX: heading 1 `Harbour notes`, heading 2 `Tides`, `paragraph`, and a table of `rows`. */
export async function harbourDocx(paragraph: string, rows: string[][]): Promise<Uint8Array> {
  const cell = (text: string) => new TableCell({ children: [new Paragraph(text)] });
  const doc = new Document({
    sections: [
      {
        children: [
          new Paragraph({ text: 'Harbour notes', heading: HeadingLevel.HEADING_1 }),
          new Paragraph({ text: 'Tides', heading: HeadingLevel.HEADING_2 }),
          new Paragraph(paragraph),
          new Table({ rows: rows.map((row) => new TableRow({ children: row.map(cell) })) }),
        ],
      },
    ],
  });
  return new Uint8Array(await Packer.toBuffer(doc));
}
