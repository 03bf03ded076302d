"""Small documentation builds in the shape their generators write them, made here rather than shipped.

    sphinx(root)    # Sphinx's HTML builder (basic theme): objects.inv, searchindex.js, _sources/, genindex.html...
    mkdocs(root)    # MkDocs: search/search_index.json, sitemap.xml, 404.html, search.html
    doxygen(root)   # Doxygen's HTML output: doxygen.css, class lists, member indexes, *_source.html
    javadoc(root)   # Javadoc (JDK 17): element-list, index-all.html, class-use/, src-html/

Each returns {relative path: True when the page is the authors' (indexed), False when generated}. The pages
hold a line or two each, in the markup their generator writes (the file names, the markers at the root and
the elements the readers look at are the real ones).
"""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path

SPHINX_PAGE = """<!DOCTYPE html>

<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1.0" />
    <meta name="generator" content="Docutils 0.19: https://docutils.sourceforge.io/" />
    <title>{title} &#8212; Gearbox 1.0 documentation</title>
    <link rel="stylesheet" type="text/css" href="{up}_static/alabaster.css" />
    <script data-url_root="{up}" id="documentation_options" src="{up}_static/documentation_options.js"></script>
    <link rel="index" title="Index" href="{up}genindex.html" />
    <link rel="search" title="Search" href="{up}search.html" />
  </head><body>
    <div class="document">
      <div class="documentwrapper">
        <div class="bodywrapper">
          <div class="body" role="main">
{body}
          </div>
        </div>
      </div>
      <div class="sphinxsidebar" role="navigation" aria-label="main navigation">
        <div class="sphinxsidebarwrapper">
<h1 class="logo"><a href="{up}index.html">Gearbox</a></h1>
<h3>Navigation</h3>
<ul><li class="toctree-l1"><a class="reference internal" href="{up}guide/install.html">Installing</a></li></ul>
<div id="searchbox" style="display: none" role="search">
  <h3 id="searchlabel">Quick search</h3>
    <form class="search" action="{up}search.html" method="get"><input type="text" name="q" /></form>
</div>
        </div>
      </div>
    </div>
    <div class="footer">&#169;2024, Gearbox authors.
      | Powered by <a href="https://www.sphinx-doc.org/">Sphinx 6.2.1</a></div>
  </body>
</html>
"""

TOCTREE = """<div class="toctree-wrapper compound">
<ul>
<li class="toctree-l1"><a class="reference internal" href="{up}guide/install.html">Installing</a><ul>
<li class="toctree-l2"><a class="reference internal" href="{up}guide/install.html#from-source">From source</a></li>
</ul>
</li>
<li class="toctree-l1"><a class="reference internal" href="{up}guide/tuning.html">Tuning the sprockets</a></li>
</ul>
</div>"""

INSTALL_RST = """Installing
==========

Install Gearbox with pip; the sprocket drivers come with it.

From source
-----------

Run ``make install`` in a clone of the repository.
"""


def _write(root: Path, files: dict[str, str | bytes]) -> None:
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def _sphinx_page(relative: str, title: str, body: str) -> str:
    up = "../" * relative.count("/")
    return SPHINX_PAGE.format(title=title, up=up, body=body.format(up=up))


def sphinx(root: Path) -> dict[str, bool]:
    """A Sphinx HTML build of a small project (`sphinx-build -b html`, the basic theme's markup)."""
    inventory = (
        b"# Sphinx inventory version 2\n# Project: Gearbox\n# Version: 1.0\n"
        b"# The remainder of this file is compressed using zlib.\n"
        + zlib.compress(
            b"gearbox py:module 0 guide/install.html#module-$ -\ninstall std:doc -1 guide/install.html Installing\n"
        )
    )
    search_index = {
        "docnames": ["contents", "guide/install", "guide/tuning", "index"],
        "filenames": ["contents.rst", "guide/install.rst", "guide/tuning.rst", "index.rst"],
        "titles": ["Contents", "Installing", "Tuning the sprockets", "Gearbox"],
        "terms": {"sprocket": [1, 2], "gearbox": [0, 1, 3]},
    }
    _write(
        root,
        {
            ".buildinfo": "# Sphinx build info version 1\n# This file hashes the configuration used when building "
            "these files. When it is not found, a full rebuild will be done.\nconfig: 5a1b0c\ntags: 645f666f\n",
            "objects.inv": inventory,
            "searchindex.js": "Search.setIndex(" + json.dumps(search_index) + ")",
            "_static/documentation_options.js": "var DOCUMENTATION_OPTIONS = {VERSION: '1.0'};\n",
            "_static/alabaster.css": "div.body { padding: 0 30px; }\n",
            "index.html": _sphinx_page(
                "index.html",
                "Gearbox",
                '<section id="gearbox"><h1>Gearbox</h1>\n<p>Gearbox drives sprockets from Python: it reads a '
                "gear plan, checks the ratios and turns the motors in order, so that a sprocket train can be "
                "tried on a desk before it is built.</p>\n" + TOCTREE + "\n</section>",
            ),
            "contents.html": _sphinx_page(
                "contents.html", "Contents", '<section id="contents"><h1>Contents</h1>\n' + TOCTREE + "\n</section>"
            ),
            "guide/install.html": _sphinx_page(
                "guide/install.html",
                "Installing",
                '<section id="installing"><h1>Installing</h1>\n<p>Install Gearbox with pip; the sprocket drivers '
                'come with it.</p>\n<section id="from-source"><h2>From source</h2>\n<p>Run <code>make install'
                "</code> in a clone of the repository.</p></section></section>",
            ),
            "guide/tuning.html": _sphinx_page(
                "guide/tuning.html",
                "Tuning the sprockets",
                '<section id="tuning"><h1>Tuning the sprockets</h1>\n<p>Oil the sprockets every thousand turns.</p>'
                "</section>",
            ),
            "genindex.html": _sphinx_page(
                "genindex.html",
                "Index",
                '<h1 id="index">Index</h1>\n<div class="genindex-jumpbox"><a href="#G"><strong>G</strong></a></div>\n'
                '<h2 id="G">G</h2>\n<table style="width: 100%" class="indextable genindextable"><tr><td><ul>'
                '<li><a href="guide/install.html#module-gearbox">gearbox (module)</a></li>'
                '<li><a href="guide/tuning.html#index-0">sprockets, tuning</a></li></ul></td></tr></table>',
            ),
            "py-modindex.html": _sphinx_page(
                "py-modindex.html",
                "Python Module Index",
                '<h1>Python Module Index</h1>\n<table class="indextable modindextable"><tr class="cap" id="cap-g">'
                '<td></td><td><strong>g</strong></td><td></td></tr><tr><td></td><td><a href="guide/install.html#'
                'module-gearbox"><code class="xref">gearbox</code></a></td><td><em>Drives sprockets.</em></td>'
                "</tr></table>",
            ),
            "search.html": _sphinx_page(
                "search.html",
                "Search",
                '<h1 id="search-documentation">Search</h1>\n<p>Searching for multiple words only shows matches '
                'that contain all words.</p>\n<form action="" method="get"><input type="text" name="q" value="" />'
                '<input type="submit" value="search" /></form>\n<div id="search-results"></div>',
            ),
            "_modules/index.html": _sphinx_page(
                "_modules/index.html",
                "Overview: module code",
                "<h1>All modules for which code is available</h1>\n"
                '<ul><li><a href="gearbox.html">gearbox</a></li></ul>',
            ),
            "_modules/gearbox.html": _sphinx_page(
                "_modules/gearbox.html",
                "gearbox",
                '<h1>Source code for gearbox</h1><div class="highlight"><pre><span></span><span class="k">def'
                '</span> <span class="nf">turn</span><span class="p">(</span>sprocket<span class="p">):</span>\n'
                "    sprocket.turn()\n</pre></div>",
            ),
            "_sources/index.rst.txt": "Gearbox\n=======\n\nGearbox drives sprockets from Python.\n\n"
            ".. toctree::\n\n   guide/install\n   guide/tuning\n",
            "_sources/contents.rst.txt": "Contents\n========\n\n.. toctree::\n\n   guide/install\n",
            "_sources/guide/install.rst.txt": INSTALL_RST,
            "_sources/guide/tuning.rst.txt": "Tuning the sprockets\n====================\n\nOil them.\n",
            # Built into a page that is not in the folder (Debian gzips the largest ones): the copy is the text.
            "_sources/changelog.rst.txt": "Changelog\n=========\n\nVersion 1.0\n-----------\n\nFirst release.\n",
        },
    )
    authored = {"index.html", "guide/install.html", "guide/tuning.html", "_sources/changelog.rst.txt"}
    return {path: path in authored for path in _documents(root)}


MKDOCS_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
    <meta charset="utf-8">
    <meta name="generator" content="mkdocs-1.5.3, mkdocs-1.5.3">
    <title>{title} - Flywheel</title>
    <link href="{up}css/base.css" rel="stylesheet">
</head>
<body>
    <div class="navbar fixed-top navbar-expand-lg navbar-dark bg-primary">
        <a class="navbar-brand" href="{up}.">Flywheel</a>
        <ul class="nav navbar-nav"><li class="navitem"><a href="{up}." class="nav-link">Home</a></li></ul>
    </div>
    <div class="container">
        <div class="col-md-9" role="main">
{body}
        </div>
    </div>
    <footer class="col-md-12"><p>Documentation built with <a href="https://www.mkdocs.org/">MkDocs</a>.</p></footer>
</body>
</html>
"""


def mkdocs(root: Path) -> dict[str, bool]:
    """A MkDocs site (`mkdocs build`, its built-in theme, and the readthedocs theme's search page)."""
    index = {
        "config": {"indexing": "full", "lang": ["en"], "min_search_length": 3, "separator": "[\\s\\-]+"},
        "docs": [{"location": "", "text": "Flywheel stores energy.", "title": "Home"}],
    }
    sitemap = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        "    <url>\n         <loc>https://flywheel.example.com/</loc>\n    </url>\n</urlset>\n"
    )

    def page(relative: str, title: str, body: str) -> str:
        return MKDOCS_PAGE.format(title=title, up="../" * relative.count("/"), body=body)

    _write(
        root,
        {
            "index.html": page("index.html", "Home", '<h1 id="flywheel">Flywheel</h1>\n<p>Flywheel stores energy.</p>'),
            "setup/index.html": page(
                "setup/index.html", "Setup", '<h1 id="setup">Setup</h1>\n<p>Bolt the flywheel to the frame.</p>'
            ),
            "404.html": page(
                "404.html", "Not found", '<h1 id="404-page">404</h1>\n<p><strong>Page not found</strong></p>'
            ),
            "search.html": page(
                "search.html",
                "Search",
                '<h1 id="search">Search Results</h1>\n<p id="mkdocs-search-results">Searching...</p>',
            ),
            "search/search_index.json": json.dumps(index, separators=(",", ":")),
            "search/worker.js": "importScripts('lunr.js');\n",
            "sitemap.xml": sitemap,
            "sitemap.xml.gz": gzip.compress(sitemap.encode("utf-8")),
            "css/base.css": "body { padding-top: 70px; }\n",
        },
    )
    return {path: path in {"index.html", "setup/index.html"} for path in _documents(root)}


def _doxygen_page(title: str, body: str) -> str:
    return (
        '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" '
        '"https://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">\n<html xmlns="http://www.w3.org/1999/xhtml">\n'
        '<head>\n<meta http-equiv="Content-Type" content="text/xhtml;charset=UTF-8"/>\n'
        '<meta name="generator" content="Doxygen 1.9.4"/>\n'
        f"<title>Ratchet: {title}</title>\n"
        '<link href="doxygen.css" rel="stylesheet" type="text/css" />\n</head>\n<body>\n'
        '<div id="top"><div id="titlearea">Ratchet 2.1</div></div>\n<!-- Generated by Doxygen 1.9.4 -->\n'
        f'<div class="header"><div class="headertitle"><div class="title">{title}</div></div></div>\n'
        f'<div class="contents">\n{body}\n</div>\n'
        '<hr class="footer"/><address class="footer"><small>Generated by <a href="https://www.doxygen.org/index.html">'
        "doxygen</a> 1.9.4</small></address>\n</body>\n</html>\n"
    )


def doxygen(root: Path) -> dict[str, bool]:
    """Doxygen's HTML output (`GENERATE_HTML`, with SOURCE_BROWSER and the search engine's pages)."""
    member = '<tr><td class="entry"><a class="el" href="classratchet_1_1_pawl.html#a1">click</a>() const</td></tr>'
    _write(
        root,
        {
            "doxygen.css": "/* The standard CSS for doxygen 1.9.4*/\n\nbody, table, div { font: 14px Roboto; }\n",
            "dynsections.js": "function toggleVisibility(linkObj) {}\n",
            "index.html": _doxygen_page("Ratchet", "<p>A ratchet library: pawls click once per tooth.</p>"),
            "classratchet_1_1_pawl.html": _doxygen_page(
                "ratchet::Pawl Class Reference",
                '<p>A pawl that engages one tooth at a time.</p>\n<h2 class="groupheader">Member Function '
                'Documentation</h2>\n<div class="memdoc"><p>Clicks the pawl into the next tooth.</p></div>',
            ),
            "classratchet_1_1_pawl-members.html": _doxygen_page(
                "ratchet::Pawl Member List",
                "<p>This is the complete list of members for ratchet::Pawl, including all inherited members.</p>\n"
                f'<table class="directory">{member}</table>',
            ),
            "annotated.html": _doxygen_page(
                "Class List", "<p>Here are the classes, structs, unions and interfaces with brief descriptions:</p>"
            ),
            "classes.html": _doxygen_page(
                "Class Index", '<div class="qindex"><a class="qindex" href="#letter_P">P</a></div>'
            ),
            "files.html": _doxygen_page(
                "File List", "<p>Here is a list of all documented files with brief descriptions:</p>"
            ),
            "functions.html": _doxygen_page(
                "Class Members",
                "<p>Here is a list of all documented class members with links to the class documentation:</p>",
            ),
            "functions_func.html": _doxygen_page(
                "Class Members - Functions", "<ul><li>click() : ratchet::Pawl</li></ul>"
            ),
            "globals.html": _doxygen_page("File Members", "<p>Here is a list of all documented file members:</p>"),
            "pawl_8h.html": _doxygen_page("pawl.h File Reference", "<p>The pawl and its tooth count.</p>"),
            "pawl_8h_source.html": _doxygen_page(
                "pawl.h",
                '<div class="fragment"><div class="line">class Pawl { public: void click() const; };</div></div>',
            ),
            "dir_68267d1309a1af8e8297ef4c3efbcdba.html": _doxygen_page(
                "src Directory Reference", "<p>Files: pawl.h</p>"
            ),
            "graph_legend.html": _doxygen_page(
                "Graph Legend", "<p>This page explains how to interpret the graphs.</p>"
            ),
            "search/all_0.html": _doxygen_page("Search", '<div class="SRResult" id="SR_click">click</div>'),
            "search/search.js": "function SearchBox(name) {}\n",
        },
    )
    authored = {"index.html", "classratchet_1_1_pawl.html", "pawl_8h.html"}
    return {path: path in authored for path in _documents(root)}


def _javadoc_page(title: str, body: str) -> str:
    return (
        '<!DOCTYPE HTML>\n<html lang="en">\n<head>\n'
        "<!-- Generated by javadoc (17) on Mon Jan 08 10:00:00 UTC 2024 -->\n"
        f"<title>{title}</title>\n"
        '<meta name="generator" content="javadoc/ClassWriterImpl">\n'
        '<link rel="stylesheet" type="text/css" href="stylesheet.css" title="Style">\n</head>\n'
        '<body class="class-declaration-page">\n'
        '<div class="flex-box">\n<header role="banner" class="flex-header"><nav role="navigation">'
        '<ul id="navbar-top-firstrow" class="nav-list" title="Navigation"><li><a href="index.html">Overview</a></li>'
        "</ul></nav></header>\n"
        f'<div class="flex-content"><main role="main">\n{body}\n</main></div>\n</div>\n</body>\n</html>\n'
    )


def javadoc(root: Path) -> dict[str, bool]:
    """Javadoc's HTML (JDK 17's doclet, with -linksource)."""
    _write(
        root,
        {
            "element-list": "com.example.spindle\n",
            "stylesheet.css": "body { background-color: #ffffff; }\n",
            "index.html": _javadoc_page("Overview", '<div class="block">The spindle API turns threads.</div>'),
            "com/example/spindle/Spindle.html": _javadoc_page(
                "Spindle",
                '<h1 title="Class Spindle" class="title">Class Spindle</h1>\n<div class="block">'
                "Winds thread onto a bobbin at a steady tension.</div>",
            ),
            "com/example/spindle/package-summary.html": _javadoc_page(
                "com.example.spindle",
                '<h1 title="Package" class="title">Package com.example.spindle</h1>\n'
                '<div class="block">Spinning machinery.</div>',
            ),
            "com/example/spindle/package-tree.html": _javadoc_page(
                "com.example.spindle Class Hierarchy", "<h1>Hierarchy For Package com.example.spindle</h1>"
            ),
            "com/example/spindle/class-use/Spindle.html": _javadoc_page(
                "Uses of Class com.example.spindle.Spindle", "<h1>Uses of Class<br>com.example.spindle.Spindle</h1>"
            ),
            "overview-tree.html": _javadoc_page("Class Hierarchy", "<h1>Hierarchy For All Packages</h1>"),
            "index-all.html": _javadoc_page("Index", '<h1>Index</h1><dl class="index"><dt>Spindle</dt></dl>'),
            "allclasses-index.html": _javadoc_page("All Classes and Interfaces", "<h1>All Classes and Interfaces</h1>"),
            "allpackages-index.html": _javadoc_page("All Packages", "<h1>All&nbsp;Packages</h1>"),
            "deprecated-list.html": _javadoc_page("Deprecated List", "<h1>Deprecated API</h1>"),
            "search.html": _javadoc_page("Search", '<h1>Search</h1><input type="text" id="page-search-input">'),
            "help-doc.html": _javadoc_page(
                "API Help", "<h1>JavaDoc Help</h1><p>Navigation: starting from the Overview page.</p>"
            ),
            "src-html/com/example/spindle/Spindle.html": _javadoc_page(
                "Source code", '<pre><span class="source-line-no">001</span>public class Spindle {}</pre>'
            ),
        },
    )
    authored = {"index.html", "com/example/spindle/Spindle.html", "com/example/spindle/package-summary.html"}
    return {path: path in authored for path in _documents(root)}


def _documents(root: Path) -> list[str]:
    """The files under `root` that lancelot-index takes for documents, as paths under it."""
    suffixes = (".html", ".htm", ".md", ".txt", ".rst", ".pdf", ".docx", ".markdown")
    return sorted(
        path.relative_to(root).as_posix()
        for path in root.rglob("*")
        if path.is_file() and path.name.lower().endswith(suffixes) and not path.name.startswith(".")
    )
