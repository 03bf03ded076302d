import subprocess
import sys


def test_importing_the_schema_pulls_in_no_heavy_module():
    code = (
        "import sys, lancelot_schema, lancelot_schema.layout, lancelot_schema.settings, lancelot_schema.stored,"
        " lancelot_schema.credentials, lancelot_schema.local_models, lancelot_schema.model_download;"
        "lancelot_schema.settings.resolve({});"
        "heavy = ('lancedb', 'mcp', 'pyarrow', 'openai', 'platformdirs', 'keyring', 'cryptography', 'onnxruntime',"
        " 'tokenizers', 'numpy');"
        "print(','.join(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
