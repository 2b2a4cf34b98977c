/**
 * SASL DIGEST-MD5 (RFC 2831), the client side, as ZooKeeper's servers speak it: an empty first
 * token, the server's digest-challenge, our digest-response, the server's `rspauth`, checked.
 * ZooKeeper's server names itself `zk-sasl-md5` for the protocol `zookeeper`.
 */
import { createHash, randomBytes } from 'node:crypto';
import { codeOfReturnCode, Rc, type ZkError } from '../errors/errors';
import { Xid } from '../wire/codes';
import { JuteReader, ProtocolError } from '../wire/jute';
import { encodeSasl } from '../wire/records';
import type { Connection } from './connection';

/** The credentials of a DIGEST-MD5 login (a user of the server's JAAS `Server` section). */
export interface SaslCredentials {
  readonly username: string;
  readonly password: string;
}

/** The `digest-uri` ZooKeeper's server expects. */
export const ZOOKEEPER_DIGEST_URI = 'zookeeper/zk-sasl-md5';

/** Parses a digest-challenge: comma-separated `key=value` or `key="quoted value"` pairs. */
export function parseDirectives(text: string): Map<string, string> {
  const directives = new Map<string, string>();
  let index = 0;
  while (index < text.length) {
    while (index < text.length && (text[index] === ',' || text[index] === ' ')) index++;
    const equals = text.indexOf('=', index);
    if (equals === -1) break;
    const key = text.slice(index, equals).trim().toLowerCase();
    index = equals + 1;
    let value = '';
    if (text[index] === '"') {
      index++;
      while (index < text.length && text[index] !== '"') {
        if (text[index] === '\\') index++;
        value += text[index] ?? '';
        index++;
      }
      index++;
    } else {
      const comma = text.indexOf(',', index);
      const end = comma === -1 ? text.length : comma;
      value = text.slice(index, end).trim();
      index = end;
    }
    if (!directives.has(key)) directives.set(key, value);
  }
  return directives;
}

const md5 = (data: string | Buffer): Buffer => createHash('md5').update(data).digest();
const hex = (data: Buffer): string => data.toString('hex');

/** What a response needs beyond the challenge: the client's nonce (random by default). */
export interface DigestOptions {
  readonly cnonce?: string;
  readonly digestUri?: string;
}

/** Our answer to a digest-challenge, and the `rspauth` the server must send back. */
export interface DigestResponse {
  readonly response: Buffer;
  readonly expectedRspauth: string;
}

/**
 * Computes the digest-response to a digest-challenge (qop `auth`, `md5-sess`).
 *
 * ## Example
 * ```ts
 * const { response } = digestResponse(challenge, { username: 'alice', password: 'secret' });
 * // username="alice",realm="zk-sasl-md5",nonce="...",nc=00000001,cnonce="...",qop=auth,...
 * ```
 *
 * @param challenge The server's token.
 * @param credentials Who we are.
 * @param options A fixed cnonce (tests), another digest-uri.
 * @return The token to send and the rspauth to expect.
 */
export function digestResponse(
  challenge: Buffer,
  credentials: SaslCredentials,
  options: DigestOptions = {},
): DigestResponse {
  const directives = parseDirectives(challenge.toString('utf8'));
  const nonce = directives.get('nonce');
  if (!nonce) throw new ProtocolError('SASL DIGEST-MD5: the challenge has no nonce');
  const qops = (directives.get('qop') ?? 'auth').split(',').map((qop) => qop.trim());
  if (!qops.includes('auth')) {
    throw new ProtocolError(`SASL DIGEST-MD5: the server offers qop ${qops.join(',')}, not auth`);
  }
  const realm = directives.get('realm') ?? '';
  const cnonce = options.cnonce ?? randomBytes(16).toString('base64');
  const digestUri = options.digestUri ?? ZOOKEEPER_DIGEST_URI;
  const nc = '00000001';
  const utf8 = directives.get('charset') === 'utf-8';
  const secret = md5(
    Buffer.from(
      `${credentials.username}:${realm}:${credentials.password}`,
      utf8 ? 'utf8' : 'latin1',
    ),
  );
  const a1 = md5(Buffer.concat([secret, Buffer.from(`:${nonce}:${cnonce}`)]));
  const digest = (a2: string) =>
    hex(md5(`${hex(a1)}:${nonce}:${nc}:${cnonce}:auth:${hex(md5(a2))}`));
  const fields = [
    `username="${quote(credentials.username)}"`,
    `realm="${quote(realm)}"`,
    `nonce="${quote(nonce)}"`,
    `nc=${nc}`,
    `cnonce="${quote(cnonce)}"`,
    'qop=auth',
    `digest-uri="${quote(digestUri)}"`,
    `response=${digest(`AUTHENTICATE:${digestUri}`)}`,
  ];
  if (utf8) fields.push('charset=utf-8');
  return {
    response: Buffer.from(fields.join(','), 'utf8'),
    expectedRspauth: digest(`:${digestUri}`),
  };
}

/** Checks the server's final token (`rspauth=...`): it proves the server knew the password. */
export function checkRspauth(token: Buffer, expected: string): boolean {
  return parseDirectives(token.toString('utf8')).get('rspauth') === expected;
}

function quote(value: string): string {
  return value.replace(/["\\]/g, (character) => `\\${character}`);
}

/** What a login on one connection reports. */
export interface SaslLoginHandlers {
  /** The connection is still the one being set up (else frames are stale and ignored). */
  isCurrent(): boolean;
  /** The server refused the login: why, and the return code the session dies with. */
  refused(message: string, rc: number): void;
  /** The server proved it knew the password: requests may go out now. */
  done(): void;
  /** The connection went during the login. */
  closed(reason: ZkError): void;
}

/**
 * SASL DIGEST-MD5 on a new connection: an empty token, the server's challenge, our response,
 * the server's rspauth (checked: the server knew the password). The server answers these at
 * once, by xid, outside the order of other requests; a refusal closes the session there. Every
 * connection logs in before any request goes out (as the Java client holds them).
 *
 * ## Example
 * ```ts
 * saslLogin(connection, () => pipeline.xid(), { username, password }, handlers);
 * ```
 */
export function saslLogin(
  connection: Connection,
  nextXid: () => number,
  credentials: SaslCredentials,
  handlers: SaslLoginHandlers,
): void {
  let expectedRspauth: string | undefined;
  const send = (token: Buffer) => connection.send(encodeSasl(nextXid(), token));
  connection.attach({
    onFrame: (frame) => {
      if (!handlers.isCurrent()) return;
      const reader = new JuteReader(frame);
      const xid = reader.int();
      reader.long();
      const err = reader.int();
      if (xid === Xid.ping || xid === Xid.notification) return;
      if (err !== Rc.ok) {
        const rc = err === Rc.sessionClosedRequireSaslAuth ? err : Rc.authFailed;
        return handlers.refused(`the server answered ${codeOfReturnCode(err)}`, rc);
      }
      const token = reader.buffer();
      if (expectedRspauth === undefined) {
        if (token.length === 0) {
          return handlers.refused('the server has no SASL login configured', Rc.authFailed);
        }
        const answer = digestResponse(token, credentials);
        expectedRspauth = answer.expectedRspauth;
        send(answer.response);
        return;
      }
      if (!checkRspauth(token, expectedRspauth)) {
        return handlers.refused(
          'the server did not prove it knew the password (rspauth)',
          Rc.authFailed,
        );
      }
      handlers.done();
    },
    onClose: (reason) => handlers.closed(reason),
  });
  send(Buffer.alloc(0));
}
