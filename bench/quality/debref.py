"""Labelled sets in Japanese and Chinese from Debian's reference manual (debian-reference-ja, -zh-cn).

The manual is one DocBook HTML page per chapter (`ch01.ja.html` … `ch12`, the preface `pr01`, the
appendix `apa`), each section a numbered `<h2>`…`<h4>` (`3.1.1. 1段目: UEFI`). The corpus of a language
is its 14 pages, copied into the work folder (`corpora/<package>/`) so that no other language's pages
and no `index.<lang>.html` (the table of contents, which lists every section title) are indexed.
Each query is "made from a section's own words", in one of two ways, each its own set:

- `debref-ja`, `debref-zh`: the section's title without its number (`1段目: UEFI`), relevant to the
  page holding it. Left out: titles less than half CJK (`Systemd init`, `screen プログラム`: commands and
  package names, which the English tokenizer already finds) and titles found in more than one page.
- `debref-ja-body`, `debref-zh-body`, harder: 3 content words (2 when there are only 2) of the first
  paragraph of the section's own text that has at least 2, joined by spaces as a person types them
  (`グロブパターン マッチ 条件`, `客户端 服务器端 通信`). A content word is a run of kanji or of
  katakana in Japanese; in Chinese, a word of 2 or more Han characters cut by jieba's dictionary
  (`python3-jieba`'s `dict.txt`, maximum-probability segmentation, no HMM) and tagged there as a noun,
  verb or set phrase. Never a word of the section's title, nor one found in more than MAX_SHARE of all
  sections. The words are drawn with the set's seed and kept in the paragraph's order.
- `debref-ja-latin`, `debref-zh-latin` (`LATIN`, for `cjk_tokenizers.py` only): the titles left out as
  mostly Latin, to see what a CJK tokenizer does to commands and names.

Chinese words are jieba's, Japanese words follow the script: neither is ICU's segmentation nor an
n-gram, so the sets favour no candidate tokenizer of `cjk_tokenizers.py` (a Lance `jieba/default` index
gets an edge on `debref-zh-body`). A page holds 3 to 102 sections, so scoring by page (as
`evaluate.py` does) asks only for the right chapter out of 14: hit@10 is near 1 for any tokenizer that
matches at all; MRR@10 and nDCG@10 carry the comparison. Each query also keeps its section's
numbered title (`section`): `cjk_tokenizers.py` scores by section too, a hit counting when its heading
trail holds that title. Built from the installed HTML on every run; nothing but this code is committed.
"""

from __future__ import annotations

import html
import math
import random
import re
import shutil
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

DOCS = Path("/usr/share/debian-reference")
JIEBA_DICT = Path("/usr/lib/python3/dist-packages/jieba/dict.txt")
# name: (Debian package, language code in the file names, whose words)
SETS = {
    "debref-ja": ("debian-reference-ja", "ja", "title"),
    "debref-zh": ("debian-reference-zh-cn", "zh-cn", "title"),
    "debref-ja-body": ("debian-reference-ja", "ja", "body"),
    "debref-zh-body": ("debian-reference-zh-cn", "zh-cn", "body"),
}
# The titles the sets leave out, mostly Latin (`Systemd init`): how a CJK index treats commands and names.
LATIN = {
    "debref-ja-latin": ("debian-reference-ja", "ja", "latin"),
    "debref-zh-latin": ("debian-reference-zh-cn", "zh-cn", "latin"),
}
MAX_SHARE = 0.05  # a word in more than 5% of the sections is too common to look a section up by
WORDS = 3

# jieba's parts of speech that make a content word, beside the nouns (n…): verbs, verbal nouns, set
# phrases, abbreviations, idioms. Left out: pronouns, adverbs, conjunctions, adjectives, numerals…
CONTENT_TAGS = {"v", "vn", "l", "j", "i"}

HEADING = re.compile(r'<h([2-6]) class="title"[^>]*>(.*?)</h\1>', re.S)
PARAGRAPH = re.compile(r"<p>(.*?)</p>", re.S)
NUMBER = re.compile(r"^(?:[A-Z]|\d+)(?:\.\d+)*\.\s*")
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af々]")
JA_WORD = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff々]{2,}|[\u30a1-\u30fa\u30fc]{2,}")
HAN_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+")


@dataclass(frozen=True)
class Section:
    """One numbered section: its page, numbered title (as in the heading trail), bare title, first paragraphs."""

    page: str
    numbered: str
    title: str
    paragraphs: tuple[str, ...]


def _plain(fragment: str) -> str:
    text = html.unescape(re.sub(r"<[^>]+>", "", fragment))
    return " ".join(text.split())


def pages(lang: str) -> list[Path]:
    """The language's chapter pages: every `*.<lang>.html` but the table of contents."""
    return sorted(path for path in DOCS.glob(f"*.{lang}.html") if not path.name.startswith("index."))


def sections(page: Path) -> list[Section]:
    """The page's sections in order, each with the paragraphs before the next heading (its own text)."""
    source = page.read_text(encoding="utf-8")
    headings = list(HEADING.finditer(source))
    found = []
    for heading, following in zip(headings, [*headings[1:], None], strict=True):
        body = source[heading.end() : following.start() if following else len(source)]
        numbered = _plain(heading.group(2))
        paragraphs = tuple(text for text in (_plain(p) for p in PARAGRAPH.findall(body)) if text)
        found.append(Section(page.name, numbered, NUMBER.sub("", numbered), paragraphs))
    return found


def cjk_share(text: str) -> float:
    letters = [char for char in text if not char.isspace()]
    return sum(bool(CJK.match(char)) for char in letters) / max(1, len(letters))


@cache
def _jieba() -> tuple[dict[str, int], set[str], float, int]:
    """jieba's dictionary: each word's frequency, the content words (by part of speech), log of the total."""
    if not JIEBA_DICT.exists():
        raise SystemExit(f"{JIEBA_DICT} is missing: install python3-jieba (scripts/bench-quality does)")
    freq: dict[str, int] = {}
    content = set()
    for line in JIEBA_DICT.read_text(encoding="utf-8").splitlines():
        word, count, tag = line.split(" ")
        freq[word] = int(count)
        if tag.startswith("n") or tag in CONTENT_TAGS:
            content.add(word)
    return freq, content, math.log(sum(freq.values())), max(map(len, freq))


def segment_zh(run: str) -> list[str]:
    """`run` (Han characters only) cut into the most probable sequence of jieba's dictionary words."""
    freq, _, log_total, longest = _jieba()
    n = len(run)
    best: list[tuple[float, int]] = [(0.0, n)] * (n + 1)
    for i in range(n - 1, -1, -1):
        best[i] = max(
            (math.log(freq.get(run[i:j], 0) or 1) - log_total + best[j][0], j)
            for j in range(i + 1, min(n, i + longest) + 1)
            if j == i + 1 or run[i:j] in freq
        )
    words, i = [], 0
    while i < n:
        words.append(run[i : best[i][1]])
        i = best[i][1]
    return words


def words(text: str, lang: str) -> list[str]:
    """The content words of `text`, in order, repeats kept."""
    if lang == "ja":
        return JA_WORD.findall(text)
    content = _jieba()[1]
    return [word for run in HAN_RUN.findall(text) for word in segment_zh(run) if len(word) >= 2 and word in content]


def _title_queries(found: list[Section], cjk: bool) -> list[dict[str, object]]:
    pages_of: dict[str, set[str]] = {}
    for section in found:
        pages_of.setdefault(section.title, set()).add(section.page)
    queries, seen = [], set()
    for section in found:
        if section.title in seen or len(pages_of[section.title]) > 1 or (cjk_share(section.title) >= 0.5) != cjk:
            continue
        seen.add(section.title)
        queries.append({"query": section.title, "relevant": [section.page], "section": section.numbered})
    return queries


def _body_queries(found: list[Section], lang: str, seed: int) -> list[dict[str, object]]:
    spread = Counter(word for section in found for word in set(words(" ".join(section.paragraphs), lang)))
    common = {word for word, count in spread.items() if count > MAX_SHARE * len(found)}
    queries = []
    for number, section in enumerate(found):
        title = set(words(section.title, lang))
        for paragraph in section.paragraphs:
            usable = list(dict.fromkeys(w for w in words(paragraph, lang) if w not in common and w not in title))
            if len(usable) >= 2:
                draw = random.Random(seed * 100_003 + number)
                query = " ".join(usable[i] for i in sorted(draw.sample(range(len(usable)), min(WORDS, len(usable)))))
                queries.append({"query": query, "relevant": [section.page], "section": section.numbered})
                break
    return queries


def corpus(package: str, lang: str, work: Path) -> Path:
    """The language's pages copied under `work/corpora/<package>` (made again on every run)."""
    folder = work / "corpora" / package
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for page in pages(lang):
        shutil.copy2(page, folder / page.name)
    return folder


def build(name: str, work: Path, seed: int) -> dict[str, Any]:
    """The set `name` (a key of SETS) as bench-quality's sets are: package, docs, exclude, language, queries."""
    package, lang, kind = {**SETS, **LATIN}[name]
    if not pages(lang):
        raise SystemExit(f"no {DOCS}/*.{lang}.html: install {package} (scripts/bench-quality does)")
    found = [section for page in pages(lang) for section in sections(page)]
    if kind == "title":
        queries = _title_queries(found, cjk=True)
        how = "each section title without its number, at least half CJK and in one page only"
    elif kind == "latin":
        queries = _title_queries(found, cjk=False)
        how = "each section title without its number, less than half CJK and in one page only"
    else:
        queries = _body_queries(found, lang, seed)
        how = f"{WORDS} content words of each section's first paragraph that has 2, drawn with seed {seed}"
    about = (
        f"{len(queries)} queries over the {len(pages(lang))} chapter pages of Debian's {package} "
        f"({len(found)} sections): {how}; built by bench/quality/debref.py"
    )
    docs = corpus(package, lang, work)
    return {"about": about, "package": package, "docs": str(docs), "exclude": [], "language": "cjk", "queries": queries}
