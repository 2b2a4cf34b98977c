/**
 * Test helper (not published): creates a znode over a raw jute connection, so this package's
 * integration tests can write data without a client library.
 */
import { connect } from 'node:net';
import { parseHostPort } from '../src/connect-string';
import {
  decodeConnectResponse,
  decodeReplyHeader,
  encodeConnectRequest,
  PacketSplitter,
} from '../src/jute';

/**
 * Creates a persistent znode (world-readable, no data) on a fresh session, then closes it.
 * Layouts from zookeeper.jute: CreateRequest {ustring path; buffer data; vector<ACL> acl; int flags},
 * ACL {int perms; Id id}, Id {ustring scheme; ustring id}; op code create = 1.
 *
 * @param hostPort The server.
 * @param path The znode's path.
 * @return Resolves once the server replied without error.
 */
export async function createZnode(hostPort: string, path: string): Promise<void> {
  const ustring = (text: string) => {
    const bytes = Buffer.from(text, 'utf8');
    const length = Buffer.alloc(4);
    length.writeInt32BE(bytes.length);
    return Buffer.concat([length, bytes]);
  };
  const int = (value: number) => {
    const bytes = Buffer.alloc(4);
    bytes.writeInt32BE(value);
    return bytes;
  };
  const body = Buffer.concat([
    int(2), // xid
    int(1), // create
    ustring(path),
    int(0), // data: empty buffer
    int(1), // one ACL
    int(31), // perms: ALL
    ustring('world'),
    ustring('anyone'),
    int(0), // flags: persistent
  ]);
  const socket = connect(parseHostPort(hostPort));
  const splitter = new PacketSplitter();
  try {
    await new Promise<void>((resolve, reject) => {
      let connected = false;
      socket.on('error', reject);
      socket.on('close', () => reject(new Error('closed before the create reply')));
      socket.on('connect', () =>
        socket.write(
          encodeConnectRequest({
            protocolVersion: 0,
            lastZxidSeen: 0n,
            timeOut: 4_000,
            sessionId: 0n,
            passwd: Buffer.alloc(16),
            readOnly: false,
          }),
        ),
      );
      socket.on('data', (chunk: Buffer) => {
        for (const packet of splitter.push(chunk)) {
          if (!connected) {
            connected = true;
            if (decodeConnectResponse(packet).timeOut <= 0) reject(new Error('no session'));
            socket.write(Buffer.concat([int(body.length), body]));
            continue;
          }
          const header = decodeReplyHeader(packet);
          if (header.xid !== 2) continue;
          if (header.err === 0) resolve();
          else reject(new Error(`create ${path} failed: ${header.err}`));
        }
      });
    });
  } finally {
    socket.destroy();
  }
}
