"""Small pages in Japanese, Chinese and Korean (and a French one), each section in its own words, for the
tests of `--language` through the server."""

from __future__ import annotations

DOCS = {
    "ja/packages.md": """# パッケージ管理

Debian のパッケージ管理システムは、ソフトウェアのインストールと削除を扱います。

## 依存関係の解決

依存関係はパッケージマネージャーが自動的に解決します。
""",
    "ja/network.html": """<html><head><title>ネットワークの設定</title></head><body>
<h1 id="net">ネットワークの設定</h1>
<p>ネットワークインターフェースの設定ファイルを編集して、固定アドレスを割り当てます。</p>
<h2 id="dns">名前解決</h2><p>ホスト名の名前解決にはリゾルバーの設定を使います。</p>
</body></html>""",
    "zh/packages.md": """# 软件包管理

Debian 的软件包管理系统负责安装和删除软件。

## 依赖关系

软件包管理器会自动解决依赖关系。
""",
    "zh/network.html": """<html><head><title>网络配置</title></head><body>
<h1 id="net">网络配置</h1><p>编辑网络接口的配置文件，为主机分配静态地址。</p>
<h2 id="dns">域名解析</h2><p>主机名的解析由解析器的设置决定。</p>
</body></html>""",
    "ko/backup.md": """# 백업과 복구

정기적인 백업은 데이터 손실을 막아 줍니다. 복구 절차를 미리 시험해 두십시오.
""",
    "fr/maisons.md": """# Les maisons

Les maisons anciennes du village ont des toits rouges.
""",
}

# Queries made of a section's own words, with the page they must find first.
QUERIES = [
    ("依存関係", "ja/packages.md"),
    ("固定アドレス", "ja/network.html"),
    ("名前解決 リゾルバー", "ja/network.html"),
    ("依赖关系", "zh/packages.md"),
    ("静态地址", "zh/network.html"),
    ("网络 接口", "zh/network.html"),
    ("백업과 복구", "ko/backup.md"),
]
