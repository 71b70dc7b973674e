"""The docs site: build it (a few pages, to stay fast), open it in headless Chromium, check links, save screenshots."""
import os, shutil, subprocess, re
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which('chromium') or shutil.which('chromium-browser') or shutil.which('google-chrome')
FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
         '--disable-component-update', '--disable-sync']
METHOD_PAGE = 'checkeval.html'   # nbs/10_checkeval.ipynb


@pytest.fixture(scope='module')
def site(tmp_path_factory):
    from checkeval.site import build_site
    out = tmp_path_factory.mktemp('site')
    report = build_site(out=out/'_site', proc=out/'_proc', n_workers=2, only=['00_core.ipynb', '04_runs.ipynb', '10_checkeval.ipynb', '31_reproduce.ipynb'])
    return Path(report['out']), report


def test_pages_and_links(site):
    from checkeval.site import check_links
    out, report = site
    for p in ['index.html', METHOD_PAGE, 'core.html', 'reproduce.html', 'reproduction.html', 'style.css']:
        assert (out/p).exists(), p
    # a partial build may link to pages it did not build; each must be a page the full build (`make docs`) writes
    from nbdev.doclinks import nbglob
    from nbdev.config import get_config, nbpath2html
    nbs = get_config().nbs_path
    full = {nbpath2html(Path(f).relative_to(nbs)).as_posix() for f in nbglob(nbs)}
    for b in check_links(out):
        target = b.split(' -> ')[1].split('#')[0].split(' ')[0]
        assert target in full, b
    page = (out/METHOD_PAGE).read_text()
    # processed by nbdev: exported functions appear with their signature (a `def ...(` block under an h3)
    assert re.search(r'<h3 id="[a-z_]+">', page) and re.search(r'>def</span>', page), f'no show_doc output on the method page: {report["notes"]}'
    assert 'show_doc(' not in page


def _chromium(args, tmp_path, timeout=90):
    cmd = [CHROMIUM, *FLAGS, f'--user-data-dir={tmp_path/"profile"}', *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


@pytest.mark.skipif(CHROMIUM is None, reason='chromium is not installed (apt-get install -y chromium)')
@pytest.mark.parametrize('page', ['index.html', METHOD_PAGE])
def test_renders_in_chromium(site, page, tmp_path):
    out, _ = site
    url = (out/page).as_uri()
    r = _chromium(['--dump-dom', url], tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    dom = r.stdout
    assert '<nav class="sidebar">' in dom and '<main>' in dom
    title = re.search(r'<h1 class="title">(.*?)</h1>', dom)
    assert title and title.group(1).strip(), 'page has no title'
    # every sidebar link of the rendered DOM points to an existing file
    for href in re.findall(r'<a href="([^"#]+\.html)"', dom):
        assert (out/page).parent.joinpath(href).resolve().exists(), href
    shots = ROOT/'_site'/'screenshots'
    shots.mkdir(parents=True, exist_ok=True)
    png = shots/f'{Path(page).stem}.png'
    png.unlink(missing_ok=True)
    r = _chromium([f'--screenshot={png}', '--window-size=1280,900', url], tmp_path)
    assert r.returncode == 0 and png.exists() and png.stat().st_size > 10_000, r.stderr[-2000:]
