// Reads a multipart request into text fields and in-memory files, with size limits. Used for
// XLSForm uploads, which are small; large uploads (attachments, imports) stream instead.
import type { FastifyRequest } from 'fastify';
import type {} from '@fastify/multipart';
import { errors } from '../errors.ts';
import type { ParsedBody, UploadedFile } from '../lib/uploaded-body.ts';


/**
 * Text fields and files of a multipart request (or a urlencoded/JSON body's fields). The files
 * together may hold at most `maxFileBytes`: an upload route takes one file (an XLSForm, a media
 * file), and ten parts of the limit each would make one request hold ten times the memory.
 */
export async function readBody(request: FastifyRequest, maxFileBytes: number): Promise<ParsedBody> {
  if (!request.isMultipart()) {
    const body = request.body;
    const fields = typeof body === 'object' && body !== null && !Array.isArray(body) ? { ...(body as Record<string, unknown>) } : {};
    return { fields, files: new Map() };
  }
  const fields: Record<string, unknown> = {};
  const files = new Map<string, UploadedFile>();
  let buffered = 0;
  for await (const part of request.parts({ limits: { fileSize: maxFileBytes, files: 10, fields: 100 } })) {
    if (part.type === 'file') {
      const bytes = await readFilePart(part.file, maxFileBytes - buffered);
      if (!bytes) throw buffered > 0 ? errors.bodyLargerThan(maxFileBytes) : errors.fileTooLarge(part.filename, maxFileBytes);
      buffered += bytes.byteLength;
      files.set(part.fieldname, { fieldName: part.fieldname, fileName: part.filename, contentType: part.mimetype, bytes });
    } else {
      fields[part.fieldname] = part.value;
    }
  }
  return { fields, files };
}

/** A file part's bytes, or undefined (the rest drained) once it passes `budget`. */
async function readFilePart(file: AsyncIterable<Buffer> & { truncated: boolean; resume(): unknown }, budget: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of file) {
    size += chunk.byteLength;
    if (size > budget) {
      file.resume();
      return undefined;
    }
    chunks.push(chunk);
  }
  return file.truncated ? undefined : Buffer.concat(chunks, size);
}

/**
 * A multipart body's text fields, for routes that take fields only (DRF parses multipart forms
 * everywhere, so a browser's FormData works on any endpoint). File parts are read past and left out.
 */
export async function readMultipartFields(request: FastifyRequest, maxFieldBytes: number): Promise<Record<string, unknown>> {
  const fields: Record<string, unknown> = {};
  for await (const part of request.parts({ limits: { fieldSize: maxFieldBytes, fields: 100, files: 10 } })) {
    if (part.type === 'file') part.file.resume();
    else fields[part.fieldname] = part.value;
  }
  return fields;
}
