"""The docs site (MkDocs Material over nbdev's processed notebooks): build the WHOLE site once per test session (every notebook,
as `make docs` does: a page that fails to render fails here), check every page and link, then open it in headless Chromium:
pages render from the file system, and, with the site served on localhost (the search index is loaded by a web worker, which
file:// pages may not start), a figure of figures/ loads and typing into the search box finds a page.

The build uses nbdev's processing cache (`_proc/`), as `make docs` does, and executes the tutorial and method notebooks
(`checkeval.tooling.site.EXECUTED`) for their pages, cached in `<CHECKEVAL_CACHE>/cache/docs/` by each notebook's and its modules' contents (a
rebuild without changes executes nothing). Without `chromium` the browser tests are skipped (said in the skip reason); the
build and link checks still run."""
import asyncio, functools, http.server, json, re, shutil, subprocess, threading, time
from html.parser import HTMLParser
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which('chromium') or shutil.which('chromium-browser') or shutil.which('google-chrome')
FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
         '--disable-component-update', '--disable-sync']
METHOD_PAGE = 'checkeval.html'   # nbs/10_checkeval.ipynb
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason='chromium is not installed (apt-get install -y chromium)')
# the first test builds the whole site (its session fixture): minutes on a loaded 2-core machine, beyond the suite's 300 s per test
pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope='session')
def site(tmp_path_factory):
    "The whole site, built once per session into a temporary folder (the checkout's _site/ is left alone)."
    from checkeval.tooling.site import build_docs
    tmp = tmp_path_factory.mktemp('site')
    report = build_docs(out=tmp/'_site', docs=tmp/'_docs')
    print(f"\ndocs build: {report}")
    return Path(report['out']), report


def notebooks() -> list[Path]:
    "The notebooks the site is built from (nbdev's: not hidden, not starting with '_')."
    nbs = ROOT/'nbs'
    return sorted(p for p in nbs.rglob('*.ipynb') if not any(x.startswith(('_', '.')) for x in p.relative_to(nbs).parts))


@pytest.fixture(scope='module')
def server(site):
    "The built site over HTTP on 127.0.0.1 (a thread of this process; nothing leaves the machine)."
    out, _ = site
    handler = functools.partial(type('Quiet', (http.server.SimpleHTTPRequestHandler,), {'log_message': lambda *a: None}), directory=str(out))
    httpd = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f'http://127.0.0.1:{httpd.server_address[1]}/'
    httpd.shutdown(); httpd.server_close()


def test_every_notebook_has_a_page(site):
    "Every notebook is a page of the site with a title and, for a module's notebook, its functions documented."
    from checkeval.tooling.site import _page_name
    out, report = site
    nbs = notebooks()
    assert len(nbs) > 40 and report['pages'] >= len(nbs), report
    for nb in nbs:
        page = out/(_page_name(nb.relative_to(ROOT/'nbs'), json.loads(nb.read_text())) + '.html')
        assert page.exists(), (nb, page)
        html = page.read_text()
        assert re.search(r'<h1[^>]*>', html) and 'md-content' in html, page
        assert 'Traceback (most recent call last)' not in html, page
        exported = any(c['cell_type'] == 'code' and ''.join(c['source']).startswith('#| export') and 'def ' in ''.join(c['source'])
                       for c in json.loads(nb.read_text())['cells'])
        if exported: assert re.search(r'<h3 id="[^"]+"', html), (page, 'no documented function')   # nbdev's show_doc expansions


def test_nav_titles_are_distinct(site):
    "Every page in the navigation has its own title (a title that loses its code span reads like another's)."
    out, _ = site
    links = re.findall(r'<a href="([^"#]+\.html)" class="md-nav__link[^"]*">\s*(.*?)</a>', (out/'index.html').read_text(), re.S)
    titles = {}
    for href, t in links: titles.setdefault(href, re.sub(r'\s+', ' ', re.sub(r'<[^>]+>', '', t)).strip())
    assert len(titles) > 100 and titles['judges_hf.html'] == 'Judges: the hf backend', titles
    pages = [t for h, t in titles.items() if not h.startswith('source/')]
    assert len(pages) == len(set(pages)), sorted(t for t in pages if pages.count(t) > 1)


def test_nav_is_grouped_for_readers(site):
    "The navigation's sections, in a reader's order: what the project does first (tutorials, methods), how it is built last."
    out, _ = site
    html = (out/'index.html').read_text()
    labels = [re.sub(r'<[^>]+>|\s+', ' ', l).strip() for l in re.findall(r'<label class="md-nav__link"[^>]*>(.*?)</label>', html, re.S)]
    order = ['Tutorials', 'Methods', 'Judges', 'Meta-evaluation', 'Reproducing the papers', 'Internals']
    present = [l for l in labels if l in order]
    assert present == [s for s in order if s in present] and set(order) - {'Tutorials'} <= set(present), labels
    def section(name):   # the pages linked between a top-level section's label and the next top-level label
        m = re.search(r'<label class="md-nav__link"[^>]*id="__nav_\d+_label"[^>]*>(?:(?!</label>).)*?' + re.escape(name), html, re.S)
        rest = html[m.end():]
        nxt = re.search(r'id="__nav_\d+_label"', rest)
        return re.findall(r'href="([^"#]+\.html)"', rest[:nxt.start()] if nxt else rest)
    assert 'judges_hf.html' in section('Judges') and METHOD_PAGE in section('Methods') and 'core.html' in section('Internals')
    assert 'judges_hf.html' not in section('Methods')


def test_method_pages_show_outputs(site):
    "An executed page shows what its examples print (an output block: code without line anchors, after the inputs); a page built from nbdev's processing alone shows inputs only; every executed notebook's result is in the cache."
    from nbdev.config import get_config
    from checkeval.tooling.codegraph import import_graph
    from checkeval.settings import cache_dir
    from checkeval.tooling.site import EXECUTED, execution_key
    import fnmatch
    out, _ = site
    blocks = lambda page: re.findall(r'<div class="highlight"><pre><span></span><code>(.*?)</code></pre></div>', (out/page).read_text(), re.S)
    outputs = [b for b in blocks(METHOD_PAGE) if '__codelineno' not in b]
    assert outputs and not any('Traceback' in b for b in outputs), len(blocks(METHOD_PAGE))
    assert blocks('grid.html') and not [b for b in blocks('grid.html') if '__codelineno' not in b]   # not executed: inputs only
    cfg = get_config()
    graph = import_graph(cfg.lib_path)
    for nb in notebooks():
        rel = nb.relative_to(ROOT/'nbs').as_posix()
        if any(fnmatch.fnmatchcase(rel, g) for g in EXECUTED):
            assert (cache_dir()/'docs'/f'{nb.stem}-{execution_key(nb, cfg.lib_path, graph)}.ipynb').exists(), rel


class _StdlibLinks(HTMLParser):
    "The href/src values and ids of a page as the standard library's HTML parser reads them (the reference for `page_links`)."
    def __init__(self):
        super().__init__(); self.urls, self.ids = [], set()
    def handle_starttag(self, tag, attrs):
        self.urls += [v for k, v in attrs if k in ('href', 'src') and v]
        self.ids |= {v for k, v in attrs if k == 'id' and v}


def test_pages_and_links(site):
    from checkeval.tooling.site import check_links, page_links
    out, report = site
    assert report['warnings'] == 0, report
    for p in ['index.html', METHOD_PAGE, 'core.html', 'reproduce.html', 'reproduction.html',
              'source/checkeval.core.html', 'search/search_index.json']:
        assert (out/p).exists(), p
    broken = check_links(out, anchors=True)      # one pass over the site's pages (each parsed once)
    for p in ['index.html', METHOD_PAGE, 'source/checkeval.core.html']:   # lxml's reading is the standard library's
        ref = _StdlibLinks(); ref.feed((out/p).read_text())
        got = page_links(out/p)
        assert ref.urls and got.urls == ref.urls and got.ids == ref.ids, p
    assert [b for b in broken if b.endswith('(no such file)')] == []
    # links the build writes (nbdev's doc links between pages, source links to numbered lines) reach their anchors;
    # in-page links written by hand in a notebook are the notebook's business
    assert [b for b in broken if not b.split(' -> ')[1].startswith('#')] == []
    page = (out/METHOD_PAGE).read_text()
    # processed by nbdev: exported functions appear with their signature and docstring under an h3, the show_doc call hidden
    assert re.search(r'<h3 id="parse_reply"', page) and re.search(r'def</span>(<span class="w"> </span>| )<span class="nf">parse_reply</span>', page), report
    assert 'show_doc(' not in page and '#| ' not in page
    src = re.search(r'href="(source/checkeval\.methods\.checkeval\.method\.html#__codelineno-0-(\d+))"', page)
    assert src, 'no source link'
    code = (out/'source/checkeval.methods.checkeval.method.html').read_text()
    assert f'id="__codelineno-0-{src.group(2)}"' in code
    line = re.sub(r'<[^>]+>', '', code.split(f'id="__codelineno-0-{src.group(2)}"')[1].split('\n')[0])
    assert 'def ' in line or 'class ' in line or '@' in line, line   # the link lands on a definition
    assert '<nav class="md-nav md-nav--secondary"' in page and 'href="#reading-the-judges-answers"' in page   # per-page table of contents


def test_figures_and_tables(site):
    out, _ = site
    page = (out/'reproduction.html').read_text()
    imgs = re.findall(r'<img[^>]+src="([^"]+\.png)"', page)
    pngs = list((ROOT/'figures').rglob('*.png'))
    assert len(imgs) == len(pngs) > 0
    for src in imgs: assert (out/src).exists(), src
    assert page.count('<table>') >= 5
    table = next((out/'figures').rglob('table*.html')).read_text()   # a linked table (Markdown) is a page with a table
    assert '<table>' in table and '<td>' in table


def _chromium(args, tmp_path, timeout=90):
    cmd = [CHROMIUM, *FLAGS, f'--user-data-dir={tmp_path/"profile"}', *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


@needs_chromium
@pytest.mark.parametrize('page', ['index.html', METHOD_PAGE, 'reproduction.html'])
def test_renders_in_chromium(site, page, tmp_path):
    out, _ = site
    url = (out/page).as_uri()
    r = _chromium(['--virtual-time-budget=5000', '--dump-dom', url], tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    dom = r.stdout
    assert 'md-sidebar--primary' in dom and 'md-content' in dom and 'md-search__input' in dom
    title = re.search(r'<h1[^>]*>(.*?)</h1>', dom, re.S)
    assert title and re.sub(r'<[^>]+>|¶', '', title.group(1)).strip(), 'page has no title'
    hrefs = re.findall(r'<a href="([^":#?]+\.html)', dom)
    assert hrefs
    for href in hrefs: assert (out/page).parent.joinpath(href).resolve().exists(), href   # every page link of the rendered DOM is a page
    shots = ROOT/'_site'/'screenshots'
    shots.mkdir(parents=True, exist_ok=True)
    png = shots/f'{Path(page).stem}.png'
    png.unlink(missing_ok=True)
    r = _chromium([f'--screenshot={png}', '--window-size=1280,900', '--virtual-time-budget=5000', url], tmp_path)
    assert r.returncode == 0 and png.exists() and png.stat().st_size > 10_000, r.stderr[-2000:]


async def _in_chromium(url, profile, act, timeout=60):
    "Open `url` in headless Chromium over the DevTools protocol once it has loaded, and return `await act(js, call)`."
    import aiohttp
    proc = subprocess.Popen([CHROMIUM, *FLAGS, f'--user-data-dir={profile}', '--remote-debugging-port=0', 'about:blank'],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        port_file, t0 = profile/'DevToolsActivePort', time.time()
        while not port_file.exists() or not port_file.read_text().strip():
            assert time.time() - t0 < timeout and proc.poll() is None, 'chromium did not start'
            await asyncio.sleep(0.1)
        port = port_file.read_text().split()[0]
        async with aiohttp.ClientSession() as http:
            targets = await (await http.get(f'http://127.0.0.1:{port}/json/list')).json()
            ws_url = next(t['webSocketDebuggerUrl'] for t in targets if t['type'] == 'page')
            async with http.ws_connect(ws_url, max_msg_size=0) as ws:
                n = 0
                async def call(method, **params):
                    nonlocal n; n += 1; await ws.send_json({'id': n, 'method': method, 'params': params})
                    while True:
                        msg = await ws.receive_json()
                        if msg.get('id') == n:
                            assert 'error' not in msg, msg
                            return msg['result']
                async def js(expr):
                    return (await call('Runtime.evaluate', expression=expr, returnByValue=True))['result'].get('value')
                await call('Page.navigate', url=url)
                t0 = time.time()
                while not await js("!!document.querySelector('.md-search__input') && document.readyState === 'complete'"):
                    assert time.time() - t0 < timeout, 'page did not load'
                    await asyncio.sleep(0.2)
                return await act(js, call)
    finally:
        proc.terminate()
        try: proc.wait(10)
        except subprocess.TimeoutExpired: proc.kill()


async def _search(url, query, profile, timeout=60):
    "Type `query` into the search box of `url`; return the results' titles and links, and the results' count line."
    async def act(js, call):
        await js("document.querySelector('.md-search__input').focus()")
        await call('Input.insertText', text=query)   # typed as keyboard input into the focused box
        t0 = time.time()
        while True:
            found = await js("[...document.querySelectorAll('.md-search-result__item a')].map(a => [a.innerText, a.getAttribute('href')])")
            if found: return found, await js("document.querySelector('.md-search-result__meta').innerText")
            assert time.time() - t0 < timeout, 'no search results'
            await asyncio.sleep(0.2)
    return await _in_chromium(url, profile, act, timeout)


async def _images(url, profile, timeout=60):
    "The PNG images of `url` once each has finished loading: [src, natural width, natural height]."
    async def act(js, call):
        t0 = time.time()
        while not await js("[...document.images].every(i => i.complete)"):
            assert time.time() - t0 < timeout, 'images did not finish loading'
            await asyncio.sleep(0.2)
        return await js("[...document.images].filter(i => i.getAttribute('src').endsWith('.png')).map(i => [i.getAttribute('src'), i.naturalWidth, i.naturalHeight])")
    return await _in_chromium(url, profile, act, timeout)


@needs_chromium
def test_figures_load_in_chromium(site, server, tmp_path):
    "Every figure shown on the tables-and-figures page loads in the browser (a PNG that decodes has a size)."
    out, _ = site
    imgs = asyncio.run(_images(server + 'reproduction.html', tmp_path/'profile'))
    assert len(imgs) == len(list((ROOT/'figures').rglob('*.png'))) > 0, imgs
    for src, w, h in imgs: assert w > 0 and h > 0, (src, w, h)


@needs_chromium
def test_search_in_chromium(site, server, tmp_path):
    out, _ = site
    index = json.loads((out/'search/search_index.json').read_text())
    assert any('parse_answers' in d['text'] for d in index['docs'])
    found, meta = asyncio.run(_search(server + 'index.html', 'parse_answers', tmp_path/'profile'))
    assert re.search(r'\d+ matching document', meta), meta
    hrefs = [h.split('#')[0].split('?')[0] for _, h in found]   # search.highlight adds ?h=query
    assert any(h.endswith('/' + METHOD_PAGE) for h in hrefs), found   # the CheckEval page documents it
    for h in hrefs: assert h.startswith(server) and (out/h.removeprefix(server)).exists(), h   # each result opens a page of the site
