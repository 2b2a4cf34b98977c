import { describe, expect, it } from 'vitest';
import { escapeHtml, pageHtml } from './page';
import { parseViewSpec } from './view-spec';

const spec = (query: string) => parseViewSpec(new URLSearchParams(query));

describe('what a page may ask for', () => {
  it('a view by name, a path, a page: nothing else is taken', () => {
    expect(spec('view=locks&path=/locks&page=2')).toEqual({
      view: 'locks',
      path: '/locks',
      page: 2,
      limit: 1000,
    });
    expect(spec('view=leaders')).toMatchObject({ view: 'leaders', path: '/' });
    expect(spec('view=partitions&path=/fleet/shards')).toEqual({
      view: 'partitions',
      path: '/fleet/shards',
    });
    expect(spec('view=locks&limit=99999999')).toMatchObject({ limit: 10_000 });
    expect(spec('view=sessions&id=10000174e4c0003&in=locks:/a&in=partitions:/f')).toEqual({
      view: 'sessions',
      id: '10000174e4c0003',
      scopes: [
        { view: 'locks', path: '/a', page: 0, limit: 1000 },
        { view: 'partitions', path: '/f' },
      ],
    });
  });

  it('refuses the rest with a typed error (400)', () => {
    for (const query of [
      'view=eval',
      'view=locks&path=relative',
      'view=locks&path=/a/',
      'view=locks&page=-1',
      'view=locks&page=1e3',
      'view=partitions&path=/',
      'view=sessions&id=<script>',
      'view=sessions&id=1&in=nocolon',
      'view=sessions&id=1&in=history:/x',
    ]) {
      expect(() => spec(query), query).toThrow(
        expect.objectContaining({ code: 'BadRequest', status: 400 }),
      );
    }
  });

  it('the page: its base escaped, no inline script', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe(
      '&#60;a href=&#34;x&#34;&#62;&#39;&#38;&#39;&#60;/a&#62;',
    );
    const html = pageHtml('/zk"><script>', '<b>label</b>');
    expect(html).toContain('<base href="/zk&#34;&#62;&#60;script&#62;/">');
    expect(html).toContain('&#60;b&#62;label&#60;/b&#62;');
    expect(html.match(/<script/g)).toHaveLength(1);
    // Its own script and style, named by their digest (kept by the browser under that URL).
    expect(html).toMatch(
      /<script type="module" src="assets\/console\.js\?v=[0-9a-f]{16}"><\/script>/,
    );
    expect(html).toMatch(/<link rel="stylesheet" href="assets\/console\.css\?v=[0-9a-f]{16}">/);
  });
});
