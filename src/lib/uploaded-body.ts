// What an upload request (an XLSForm, a media file) holds once read: its text fields and its
// files in memory. src/http/multipart.ts reads requests into it; services take it as input.

export interface UploadedFile {
  fieldName: string;
  fileName: string;
  contentType: string;
  bytes: Uint8Array;
}

export interface ParsedBody {
  fields: Record<string, unknown>;
  files: Map<string, UploadedFile>;
}
