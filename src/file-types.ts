/**
 * The file types researcher reads, by extension (lower case, no dot): what a repository indexes unless its
 * `file_types` say otherwise, and what `repo add --help` lists. Another type a user names is read as plain text.
 * A leaf, so that configuration can name the default without importing the converters.
 */
export const FILE_TYPES: readonly string[] = ["md", "markdown", "mdx", "txt", "pdf", "docx", "html", "htm", "xhtml", "epub"];
