// Reads a multipart request into text fields and in-memory files, with size limits. Used for
// XLSForm uploads, which are small; large uploads (attachments, imports) stream instead.
import type { FastifyRequest } from 'fastify';
import type {} from '@fastify/multipart';
import { AppError } from '../errors.ts';

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

export async function readBody(request: FastifyRequest, maxFileBytes: number): Promise<ParsedBody> {
  if (!request.isMultipart()) {
    const body = request.body;
    const fields = typeof body === 'object' && body !== null && !Array.isArray(body) ? { ...(body as Record<string, unknown>) } : {};
    return { fields, files: new Map() };
  }
  const fields: Record<string, unknown> = {};
  const files = new Map<string, UploadedFile>();
  for await (const part of request.parts({ limits: { fileSize: maxFileBytes, files: 10, fields: 100 } })) {
    if (part.type === 'file') {
      const bytes = await part.toBuffer();
      if (part.file.truncated) throw new AppError(413, { detail: `The file "${part.filename}" is larger than ${maxFileBytes} bytes.` });
      files.set(part.fieldname, { fieldName: part.fieldname, fileName: part.filename, contentType: part.mimetype, bytes });
    } else {
      fields[part.fieldname] = part.value;
    }
  }
  return { fields, files };
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
