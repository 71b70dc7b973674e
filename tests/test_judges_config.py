"The papers' judges as configured: G-Eval's allowed answers are enforced wherever the serving backend can do it."
from pathlib import Path
import yaml

ROOT = Path(__file__).resolve().parents[1]


def test_self_hosted_judges_enforce_the_allowed_answers():
    "A judge served by vLLM's OpenAI-compatible server (an entry reached through base_url_env) sends the request's choices."
    judges = yaml.safe_load((ROOT/'configs'/'judges.yaml').read_text())['judges']
    served = {k: v for k, v in judges.items() if v.get('backend') == 'openai' and v.get('base_url_env')}
    assert served, 'no self-hosted entry found'
    loose = sorted(k for k, v in served.items() if v.get('choice_mode') in (None, 'none'))
    assert not loose, f'set choice_mode (guided_choice) on {loose}'
