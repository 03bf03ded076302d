import subprocess
import sys


def test_importing_the_schema_pulls_in_no_heavy_module():
    code = (
        "import sys, lancelot_schema, lancelot_schema.layout, lancelot_schema.settings, lancelot_schema.stored,"
        " lancelot_schema.credentials;"
        "heavy = ('lancedb', 'mcp', 'pyarrow', 'openai', 'platformdirs', 'keyring', 'cryptography');"
        "print(','.join(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
