import { describe, expect, it } from 'vitest';
import { checkRspauth, digestResponse, parseDirectives } from './sasl';

describe('SASL DIGEST-MD5', () => {
  // RFC 2831, section 4: the example exchange.
  const challenge = Buffer.from(
    'realm="elwood.innosoft.com",nonce="OA6MG9tEQGm2hh",qop="auth",algorithm=md5-sess,charset=utf-8',
  );

  it("answers RFC 2831's example challenge with its response, and expects its rspauth", () => {
    const { response, expectedRspauth } = digestResponse(
      challenge,
      { username: 'chris', password: 'secret' },
      { cnonce: 'OA6MHXh6VqTrRk', digestUri: 'imap/elwood.innosoft.com' },
    );
    const fields = parseDirectives(response.toString());
    expect(fields.get('response')).toBe('d388dad90d4bbd760a152321f2143af7');
    expect(fields.get('username')).toBe('chris');
    expect(fields.get('nc')).toBe('00000001');
    expect(fields.get('digest-uri')).toBe('imap/elwood.innosoft.com');
    expect(expectedRspauth).toBe('ea40f60335c427b5527b84dbabcdfffd');
    expect(
      checkRspauth(Buffer.from('rspauth=ea40f60335c427b5527b84dbabcdfffd'), expectedRspauth),
    ).toBe(true);
    expect(checkRspauth(Buffer.from('rspauth=00'), expectedRspauth)).toBe(false);
  });

  it('parses quoted and bare directives, escapes included', () => {
    const parsed = parseDirectives('a="x,y",b=2, c="q\\"uote"');
    expect([...parsed]).toEqual([
      ['a', 'x,y'],
      ['b', '2'],
      ['c', 'q"uote'],
    ]);
  });

  it('refuses a challenge without a nonce or without qop auth', () => {
    expect(() =>
      digestResponse(Buffer.from('realm="r"'), { username: 'u', password: 'p' }),
    ).toThrow('no nonce');
    expect(() =>
      digestResponse(Buffer.from('nonce="n",qop="auth-conf"'), { username: 'u', password: 'p' }),
    ).toThrow('not auth');
  });
});
