import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fetchRemoteFile, isPrivateAddress, RemoteFetchError } from './remote-fetch.ts';

test('private, loopback and link-local addresses, however IPv6 writes them', () => {
  const refused = [
    '127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1',
    '::', '::1', '0:0:0:0:0:0:0:1', 'fe80::1', 'fe80::1%eth0', 'fc00::1', 'fd12:3456::1', 'ff02::1', 'fec0::1',
    '::ffff:127.0.0.1', '::ffff:7f00:1', '::FFFF:7F00:0001', '0:0:0:0:0:ffff:a9fe:a9fe', '::ffff:10.0.0.1', '::127.0.0.1',
    '64:ff9b::7f00:1', '64:ff9b::192.168.0.1', '2002:7f00:1::', '2002:c0a8:101::1', '2001:0:4136:e378::1', 'not-an-address', '1::2::3',
  ];
  for (const address of refused) assert.equal(isPrivateAddress(address), true, address);
  const allowed = ['8.8.8.8', '93.184.216.34', '2606:4700::1111', '::ffff:8.8.8.8', '::ffff:808:808', '64:ff9b::808:808', '2002:808:808::1'];
  for (const address of allowed) assert.equal(isPrivateAddress(address), false, address);
});

test('a loopback server is refused however its address is written; when allowed, its redirects are followed', async () => {
  const server: Server = createServer((req, res) => {
    if (req.url === '/hop') res.writeHead(302, { location: `http://127.0.0.1:${(server.address() as AddressInfo).port}/form.csv` }).end();
    else res.writeHead(200, { 'content-type': 'text/csv' }).end('a,b\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const options = { maxBytes: 1000, timeoutMs: 5000, allowPrivateAddresses: false };
  try {
    for (const host of ['127.0.0.1', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]', 'localhost']) {
      await assert.rejects(fetchRemoteFile(`http://${host}:${port}/form.csv`, options), RemoteFetchError, host);
    }
    // Allowed, the same server is reached, through its redirect too.
    const fetched = await fetchRemoteFile(`http://127.0.0.1:${port}/hop`, { ...options, allowPrivateAddresses: true });
    assert.equal(Buffer.from(fetched.bytes).toString(), 'a,b\n');
  } finally {
    server.close();
  }
});
