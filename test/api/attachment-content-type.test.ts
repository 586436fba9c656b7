// A record's files are stored and served with the type their name and first bytes agree on, not
// the application/octet-stream that many senders claim (as form media are judged).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createUser, postSubmission, publishForm, startTestServer, type TestServer, type TestUser } from '../helpers.ts';
import { csvForm, formFile } from '../fixtures/forms.ts';

let server: TestServer;
let bob: TestUser;
let formId: number;

const FORM = csvForm({ id: 'voices', extra: ',audio,voice,Voice\n,image,pic,Picture' });

function wav(size: number): Buffer {
  const bytes = Buffer.alloc(size);
  bytes.write('RIFF', 0, 'latin1');
  bytes.writeUInt32LE(size - 8, 4);
  bytes.write('WAVEfmt ', 8, 'latin1');
  return bytes;
}

function instance(uuid: string, voice: string, pic: string): string {
  return `<?xml version="1.0"?><voices id="voices" version="2026010101"><name>Ann</name><age>3</age><voice>${voice}</voice><pic>${pic}</pic>` +
    `<meta><instanceID>uuid:${uuid}</instanceID></meta></voices>`;
}

async function attachmentsOf(uuid: string): Promise<Array<{ filename: string; mimetype: string; id: number }>> {
  const res = await server.app.inject({ method: 'GET', url: `/api/v1/data/${formId}?query={"_uuid":"${uuid}"}`, headers: bob.auth });
  assert.equal(res.statusCode, 200, res.body);
  const [record] = res.json();
  return record._attachments;
}

before(async () => {
  server = await startTestServer();
  bob = await createUser(server.app, 'bob');
  formId = await publishForm(server.app, bob, formFile(FORM, 'voices.csv'));
});
after(() => server.close());

test('a WAV posted as application/octet-stream is stored and served as audio/wav', async () => {
  const uuid = randomUUID();
  const res = await postSubmission(server.app, '/bob/submission', instance(uuid, 'voice.wav', 'pic.jpg'), bob.auth, [
    { name: 'voice.wav', content: wav(4000), type: 'application/octet-stream' },
    { name: 'pic.jpg', content: Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46]), type: 'application/octet-stream' },
  ]);
  assert.equal(res.statusCode, 201, res.body);
  const files = await attachmentsOf(uuid);
  assert.deepEqual(files.map((f) => [f.filename, f.mimetype]), [['voice.wav', 'audio/wav'], ['pic.jpg', 'image/jpeg']]);
  const voice = files.find((f) => f.filename === 'voice.wav');
  const served = await server.app.inject({ method: 'GET', url: `/api/v1/files/${voice?.id}?filename=voice.wav`, headers: bob.auth });
  assert.equal(served.statusCode, 200);
  assert.match(String(served.headers['content-type']), /^audio\/wav/);
});

test('a large file read from disk is judged the same way', async () => {
  const uuid = randomUUID();
  const res = await postSubmission(server.app, '/bob/submission', instance(uuid, 'long.wav', ''), bob.auth, [
    { name: 'long.wav', content: wav(1_500_000), type: 'application/octet-stream' },
  ]);
  assert.equal(res.statusCode, 201, res.body);
  assert.deepEqual((await attachmentsOf(uuid)).map((f) => f.mimetype), ['audio/wav']);
});

test('a name and content that disagree, or a type not told by its first bytes, keep the sender’s claim', async () => {
  const uuid = randomUUID();
  const res = await postSubmission(server.app, '/bob/submission', instance(uuid, 'fake.wav', 'notes.bin'), bob.auth, [
    { name: 'fake.wav', content: Buffer.from('not a wave file at all'), type: 'application/octet-stream' },
    { name: 'notes.bin', content: Buffer.from('RIFF0000WAVEfmt '), type: 'application/x-custom' },
  ]);
  assert.equal(res.statusCode, 201, res.body);
  assert.deepEqual((await attachmentsOf(uuid)).map((f) => [f.filename, f.mimetype]), [['fake.wav', 'application/octet-stream'], ['notes.bin', 'application/x-custom']]);
});
