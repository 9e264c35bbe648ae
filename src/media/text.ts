// Text of a document, read locally where a well-kept package can: plain text, Markdown, CSV and
// JSON as they are, HTML without its markup (html-to-text), PDF's text layer (unpdf, a build of
// pdf.js), DOCX's paragraphs (mammoth). A PDF without a text layer (a scan) answers null, for the
// model to read instead. Each package is imported when a document of its kind first arrives: most
// processes never read one, and importing all three at start cost a tenth of the app's import.
import { ValidationError } from '../platform/errors.js';

export async function documentText(bytes: Uint8Array<ArrayBuffer>, mimeType: string): Promise<string | null> {
  try {
    switch (mimeType) {
      case 'text/html': {
        const { convert } = await import('html-to-text');
        return convert(new TextDecoder().decode(bytes), { wordwrap: false, selectors: [{ selector: 'a', options: { ignoreHref: true } }, { selector: 'img', format: 'skip' }, ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, options: { uppercase: false } }))] }).trim();
      }
      case 'application/pdf': {
        const { extractText, getDocumentProxy } = await import('unpdf');
        const { text } = await extractText(await getDocumentProxy(new Uint8Array(bytes)), { mergePages: true });
        return text.trim() === '' ? null : text.trim();
      }
      case 'application/vnd.openxmlformats-officedocument.wordprocessingml.document': {
        const { default: mammoth } = await import('mammoth');
        return (await mammoth.extractRawText({ buffer: Buffer.from(bytes) })).value.trim();
      }
      default:
        return new TextDecoder().decode(bytes).trim();
    }
  } catch (error) {
    throw new ValidationError(`the ${mimeType} file could not be read: ${(error as Error).message}`.slice(0, 300), { errors: [{ path: 'body.dataBase64', message: 'unreadable document' }] });
  }
}
