// The body of an OpenRosa submission (multipart: the instance as xml_submission_file, then its
// files), read so that no request makes the server hold more than a chunk of a file and a small
// instance: who is asking is settled from the URL and credentials before any of the body is read,
// the whole is capped (SUBMISSION_LIMIT), files wait on disk one part at a time, and the instance,
// once it has arrived, decides whether anything after it is read at all. Small bodies, the
// common submission, are read whole and split in memory, with no disk write.
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, open, readFile, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyRequest } from 'fastify';
import type {} from '@fastify/multipart';
import type { RequestContext } from '../../context.ts';
import { errors } from '../../errors.ts';
import { isAuthenticated } from '../../access/index.ts';
import { findActiveUserByUsername } from '../accounts/repository.ts';
import { isFilePart, multipartBoundary, splitMultipart, type PartHead } from './multipart-body.ts';
import { MultipartStream, type ChunkSource } from './multipart-stream.ts';
import { admitInstance, refuseUnlessMaySubmit, type AdmittedInstance, type SubmissionTarget, type SubmissionUpload, type UploadedMedia } from './receive.ts';

/** Bodies up to this size are read whole and split in memory (multipart-body.ts); larger ones stream. */
const IN_MEMORY_BODY_BYTES = 1024 * 1024;
/** A streamed instance larger than this waits on disk until its sender is known to be allowed. */
const IN_MEMORY_INSTANCE_BYTES = 1024 * 1024;
const MAX_FILES = 1000;
const MAX_FIELDS = 100;

// ---- Before the body --------------------------------------------------------------------------

/** Per app (keyed by its decision cache): owners lately found to take anonymous submissions. */
const openOwners = new WeakMap<object, Map<string, number>>();
/** Only a guard against reading bodies for nothing: the submission itself is decided afresh. */
const OPEN_OWNER_MS = 5000;

/**
 * Refuses what the URL and the credentials alone refuse, before any of the body is read:
 * `/submission` without credentials, an unknown or inactive owner, an owner who requires
 * credentials. For an authenticated caller to `/{username}/submission` the form is not known
 * yet; `strict` (HEAD) still checks that the owner exists.
 */
export async function refuseBeforeBody(ctx: RequestContext, target: SubmissionTarget, strict = false): Promise<void> {
  const anonymous = !isAuthenticated(ctx.actor);
  if (target.ownerless) {
    if (anonymous) throw errors.notAuthenticated(ctx.challenge);
    return;
  }
  if (target.username === undefined || (!anonymous && !strict)) return;
  const login = target.username.toLowerCase();
  const open = openOwners.get(ctx.submissionTargets) ?? new Map<string, number>();
  const now = ctx.clock.now().getTime();
  if (anonymous && (open.get(login) ?? 0) > now) return;
  const owner = await findActiveUserByUsername(ctx.db, target.username);
  if (!owner) throw errors.notFound();
  if (owner.require_auth && anonymous) throw errors.notAuthenticated(ctx.challenge);
  if (anonymous) {
    if (open.size >= 10_000) open.clear();
    open.set(login, now + OPEN_OWNER_MS);
    openOwners.set(ctx.submissionTargets, open);
  }
}

/** Whether a request that ends now leaves body bytes unread (its connection cannot carry another). */
export function bodyLeftUnread(request: FastifyRequest): boolean {
  const declared = request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
  return declared && !request.raw.readableEnded;
}

// ---- Temporary files --------------------------------------------------------------------------

interface SpoolFile {
  readonly path: string;
  write(piece: Uint8Array): Promise<void>;
  close(): Promise<void>;
}

/** One request's temporary files, in DATA_DIR/tmp (the system's when DATA_DIR does not exist). */
class Spool {
  readonly #dataDir: string;
  readonly #files = new Map<string, FileHandle | undefined>();
  #dir: string | undefined;

  constructor(dataDir: string) {
    this.#dataDir = dataDir;
  }

  async create(): Promise<SpoolFile> {
    if (this.#dir === undefined) {
      const dir = existsSync(this.#dataDir) ? join(this.#dataDir, 'tmp') : tmpdir();
      await mkdir(dir, { recursive: true });
      this.#dir = dir;
    }
    const path = join(this.#dir, `submission-${randomUUID()}`);
    const handle = await open(path, 'wx', 0o600);
    this.#files.set(path, handle);
    return {
      path,
      write: async (piece) => {
        await handle.write(piece);
      },
      close: async () => {
        this.#files.set(path, undefined);
        await handle.close();
      },
    };
  }

  async remove(path: string): Promise<void> {
    await this.#files.get(path)?.close();
    this.#files.delete(path);
    await rm(path, { force: true });
  }

  /** Removes every file, on every way out of the request. */
  async discard(): Promise<void> {
    await Promise.all([...this.#files.keys()].map((path) => this.remove(path).catch(() => undefined)));
  }
}

// ---- Reading the body -------------------------------------------------------------------------

/** The body's chunks, pulled one at a time (never ahead), with a 413 past `limit` bytes in all. */
function bodyChunks(request: FastifyRequest, limit: number): ChunkSource {
  // Never returned early: that would destroy the socket before the answer is sent.
  const chunks = request.raw[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let total = 0;
  return async () => {
    let next: IteratorResult<Buffer>;
    try {
      next = await chunks.next();
    } catch {
      throw errors.bodyCutShort();
    }
    if (next.done) return undefined;
    total += next.value.byteLength;
    if (total > limit) throw errors.bodyLargerThan(limit);
    return next.value;
  };
}

function contentTypeOf(fileName: string, mimetype: string): string {
  return fileName.toLowerCase().endsWith('.osm') ? 'text/xml' : mimetype;
}

/** The whole body of a request that declared its length (Node stops at Content-Length). */
async function wholeBody(request: FastifyRequest, length: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request.raw) {
    const bytes = chunk as Buffer;
    chunks.push(bytes);
    size += bytes.byteLength;
  }
  if (size !== length) throw errors.contentLengthMismatch();
  return chunks.length === 1 && chunks[0] ? chunks[0] : Buffer.concat(chunks, size);
}

/** A small multipart body (the usual submission: one XML file, perhaps a photo), split in memory. */
async function readSmallUpload(request: FastifyRequest, boundary: string, length: number, maxFileBytes: number, maxInstanceBytes: number): Promise<SubmissionUpload> {
  const parts = splitMultipart(await wholeBody(request, length), boundary);
  if (!parts) throw errors.multipartMalformed();
  const upload: SubmissionUpload = { xml: undefined, media: [] };
  let files = 0;
  let fields = 0;
  for (const part of parts) {
    if (!isFilePart(part)) {
      if (++fields > MAX_FIELDS) throw errors.tooManyParts();
      continue;
    }
    if (++files > MAX_FILES) throw errors.tooManyParts();
    const fileName = part.filename ?? '';
    const limit = part.name === 'xml_submission_file' ? maxInstanceBytes : maxFileBytes;
    if (part.data.byteLength > limit) throw errors.fileTooLarge(fileName, limit);
    const bytes = part.data;
    if (part.name === 'xml_submission_file') upload.xml = bytes;
    else upload.media.push({ name: fileName, contentType: contentTypeOf(fileName, part.mimetype), size: bytes.byteLength, content: bytes });
  }
  return upload;
}

/**
 * Whether the instance may name this file. A name that appears nowhere in its text is none of its
 * values: only a character reference could hide one, and with those every file is kept (the
 * record's own list decides what is stored in any case).
 */
function mayBeNamed(xml: string, fileName: string): boolean {
  return xml.includes(fileName) || /[&<>"']/.test(fileName) || xml.includes('&#');
}

/** Finds the first `<formhub><uuid>…</uuid>` of a document read in pieces (it names the form). */
class FormhubScan {
  static readonly #pattern = /<formhub>\s*<uuid>[^<]*<\/uuid>/;
  static readonly #overlap = 4096;
  found = '';
  #tail = '';

  scan(piece: Buffer): void {
    if (this.found) return;
    const text = this.#tail + piece.toString('latin1');
    const match = FormhubScan.#pattern.exec(text);
    if (match) this.found = match[0];
    else this.#tail = text.slice(-FormhubScan.#overlap);
  }
}

async function spoolPart(parts: MultipartStream, spool: Spool, fileName: string, maxBytes: number): Promise<{ path: string; size: number }> {
  const file = await spool.create();
  let size = 0;
  for (let piece = await parts.read(); piece; piece = await parts.read()) {
    size += piece.byteLength;
    if (size > maxBytes) throw errors.fileTooLarge(fileName, maxBytes);
    await file.write(piece);
  }
  await file.close();
  return { path: file.path, size };
}

/**
 * Reads the instance part and decides whether its sender may submit it. A large instance waits on
 * disk meanwhile, the decision made from its head and formhub uuid: a refused sender costs no
 * more memory than a small one.
 */
async function admitInstancePart(ctx: RequestContext, target: SubmissionTarget, parts: MultipartStream, spool: Spool, fileName: string): Promise<AdmittedInstance> {
  const maxBytes = ctx.config.instanceLimitBytes;
  const pieces: Buffer[] = [];
  let size = 0;
  let spooled: { file: SpoolFile; head: Buffer; formhub: FormhubScan } | undefined;
  for (let piece = await parts.read(); piece; piece = await parts.read()) {
    size += piece.byteLength;
    if (size > maxBytes) throw errors.fileTooLarge(fileName, maxBytes);
    if (!spooled && size <= IN_MEMORY_INSTANCE_BYTES) {
      pieces.push(piece);
      continue;
    }
    if (!spooled) {
      const head = Buffer.concat(pieces);
      pieces.length = 0;
      spooled = { file: await spool.create(), head, formhub: new FormhubScan() };
      spooled.formhub.scan(head);
      await spooled.file.write(head);
    }
    spooled.formhub.scan(piece);
    await spooled.file.write(piece);
  }
  if (!spooled) return admitInstance(ctx, target, Buffer.concat(pieces));
  await spooled.file.close();
  await refuseUnlessMaySubmit(ctx, target, `${spooled.head.toString('utf8')}\n${spooled.formhub.found}`);
  const bytes = await readFile(spooled.file.path);
  await spool.remove(spooled.file.path);
  return admitInstance(ctx, target, bytes);
}

/** A large body, parsed as it arrives: the instance in memory, each file on disk. */
async function readStreamedUpload(ctx: RequestContext, request: FastifyRequest, target: SubmissionTarget, boundary: string, spool: Spool): Promise<SubmissionUpload> {
  const maxFileBytes = ctx.config.uploadLimitBytes;
  const parts = new MultipartStream(bodyChunks(request, ctx.config.submissionLimitBytes), boundary);
  let media: Array<UploadedMedia & { path: string }> = [];
  let admitted: AdmittedInstance | undefined;
  let files = 0;
  let fields = 0;
  for (let head: PartHead | undefined = await parts.nextPart(); head; head = await parts.nextPart()) {
    if (!isFilePart(head)) {
      if (++fields > MAX_FIELDS) throw errors.tooManyParts();
      continue;
    }
    if (++files > MAX_FILES) throw errors.tooManyParts();
    const fileName = head.filename ?? '';
    if (head.name === 'xml_submission_file') {
      // The first instance counts; a refused sender's body is read no further.
      if (admitted) continue;
      const instance = await admitInstancePart(ctx, target, parts, spool, fileName);
      admitted = instance;
      const unnamed = media.filter((file) => !mayBeNamed(instance.xml, file.name));
      for (const file of unnamed) await spool.remove(file.path);
      media = media.filter((file) => mayBeNamed(instance.xml, file.name));
      continue;
    }
    // A file the instance does not name is passed over unread (nextPart skips its data).
    if (admitted && !mayBeNamed(admitted.xml, fileName)) continue;
    const { path, size } = await spoolPart(parts, spool, fileName, maxFileBytes);
    media.push({ name: fileName, contentType: contentTypeOf(fileName, head.mimetype), size, path, content: { path } });
  }
  await parts.finish();
  return { xml: undefined, admitted, media };
}

/**
 * Reads a submission's body and hands it to `use`; its temporary files are removed however that
 * ends (stored, refused, failed, or the client gone mid-body).
 */
export async function withSubmissionUpload<T>(ctx: RequestContext, request: FastifyRequest, target: SubmissionTarget, use: (upload: SubmissionUpload) => Promise<T>): Promise<T> {
  if (!request.isMultipart()) throw errors.noXmlSubmissionFile();
  const limit = ctx.config.submissionLimitBytes;
  const declared = request.headers['content-length'];
  const length = declared === undefined ? undefined : Number(declared);
  if (length !== undefined && length > limit) throw errors.bodyLargerThan(limit);
  const boundary = multipartBoundary(String(request.headers['content-type'] ?? ''));
  if (!boundary) throw errors.multipartBoundaryMissing();
  if (length !== undefined && Number.isInteger(length) && length > 0 && length <= IN_MEMORY_BODY_BYTES) {
    return use(await readSmallUpload(request, boundary, length, ctx.config.uploadLimitBytes, ctx.config.instanceLimitBytes));
  }
  const spool = new Spool(ctx.config.dataDir);
  try {
    return await use(await readStreamedUpload(ctx, request, target, boundary, spool));
  } finally {
    await spool.discard();
  }
}
