/** DOCX files written by tests: known body XML in the smallest package mammoth reads. */
import { strToU8, zipSync } from "fflate";

/**
 * The smallest DOCX mammoth reads: a main part found through the package relationships; `comments` and `numbering`
 * are the insides of a comments and a numbering part, linked from the main part.
 */
export function docx(body: string, core?: string, comments?: string, numbering?: string): Uint8Array {
  const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';
  return zipSync({
    "[Content_Types].xml": strToU8(
      `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`,
    ),
    "_rels/.rels": strToU8(
      `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`,
    ),
    "word/document.xml": strToU8(`<?xml version="1.0"?><w:document ${W}><w:body>${body}</w:body></w:document>`),
    ...(core ? { "docProps/core.xml": strToU8(core) } : {}),
    ...(comments === undefined && numbering === undefined
      ? {}
      : {
          "word/_rels/document.xml.rels": strToU8(
            `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId9" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/comments" Target="comments.xml"/><Relationship Id="rId8" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/numbering" Target="numbering.xml"/></Relationships>`,
          ),
        }),
    ...(comments === undefined ? {} : { "word/comments.xml": strToU8(`<?xml version="1.0"?><w:comments ${W}>${comments}</w:comments>`) }),
    ...(numbering === undefined
      ? {}
      : { "word/numbering.xml": strToU8(`<?xml version="1.0"?><w:numbering ${W}>${numbering}</w:numbering>`) }),
  });
}
