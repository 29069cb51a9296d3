/*
 * Content types for common attachment extensions, used when a client sends no `content_type`
 * (Resend derives it from the filename too). Deliberately small: an unknown extension is
 * sent as application/octet-stream, which every mail client can still save.
 */
const BY_EXTENSION = new Map<string, string>([
  ['pdf', 'application/pdf'],
  ['png', 'image/png'],
  ['jpg', 'image/jpeg'],
  ['jpeg', 'image/jpeg'],
  ['gif', 'image/gif'],
  ['webp', 'image/webp'],
  ['svg', 'image/svg+xml'],
  ['bmp', 'image/bmp'],
  ['ico', 'image/vnd.microsoft.icon'],
  ['tif', 'image/tiff'],
  ['tiff', 'image/tiff'],
  ['heic', 'image/heic'],
  ['avif', 'image/avif'],
  ['txt', 'text/plain'],
  ['log', 'text/plain'],
  ['md', 'text/markdown'],
  ['html', 'text/html'],
  ['htm', 'text/html'],
  ['css', 'text/css'],
  ['csv', 'text/csv'],
  ['tsv', 'text/tab-separated-values'],
  ['ics', 'text/calendar'],
  ['vcf', 'text/vcard'],
  ['xml', 'application/xml'],
  ['json', 'application/json'],
  ['rtf', 'application/rtf'],
  ['zip', 'application/zip'],
  ['gz', 'application/gzip'],
  ['tar', 'application/x-tar'],
  ['7z', 'application/x-7z-compressed'],
  ['doc', 'application/msword'],
  ['docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
  ['xls', 'application/vnd.ms-excel'],
  ['xlsx', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'],
  ['ppt', 'application/vnd.ms-powerpoint'],
  ['pptx', 'application/vnd.openxmlformats-officedocument.presentationml.presentation'],
  ['odt', 'application/vnd.oasis.opendocument.text'],
  ['ods', 'application/vnd.oasis.opendocument.spreadsheet'],
  ['odp', 'application/vnd.oasis.opendocument.presentation'],
  ['epub', 'application/epub+zip'],
  ['eml', 'message/rfc822'],
  ['mp3', 'audio/mpeg'],
  ['wav', 'audio/wav'],
  ['ogg', 'audio/ogg'],
  ['m4a', 'audio/mp4'],
  ['mp4', 'video/mp4'],
  ['mov', 'video/quicktime'],
  ['webm', 'video/webm'],
  ['woff', 'font/woff'],
  ['woff2', 'font/woff2'],
]);

export const DEFAULT_CONTENT_TYPE = 'application/octet-stream';

/** The type for a file name's extension (case-insensitive), or null when the table has none. */
export function contentTypeFor(filename: string): string | null {
  const dot = filename.lastIndexOf('.');
  if (dot < 0 || dot === filename.length - 1) return null;
  return BY_EXTENSION.get(filename.slice(dot + 1).toLowerCase()) ?? null;
}
