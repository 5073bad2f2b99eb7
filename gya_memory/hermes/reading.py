"""Reading a text before the injection rules see it (规范化): undo the disguises.

Why (为什么): an attacker writes ``ｉｇｎｏｒｅ``, ``іgnоrе`` or ``1gn0r3`` so that a list of
phrases misses it. What :func:`normalise` does:

1. the emoji parts that are allowed (a zero-width joiner between two emoji, U+FE0F after
   one, the tags of a subdivision flag) are set aside; every other invisible or format
   character (Unicode Cf, variation selectors, Hangul fillers, the braille blank, U+034F ...)
   and every bidi control is reported and removed;
2. each character is NFKC-folded (full-width ｉｇｎｏｒｅ, 𝐢𝐠𝐧𝐨𝐫𝐞, ⓘⓖⓝⓞⓡⓔ → ignore) and case-folded;
3. look-alike letters become Latin: Cyrillic and Greek (``іgnоrе``), Armenian (``օ``), Cherokee
   (``Ꭰ``), small capitals (``ɪɢɴᴏʀᴇ``), enclosed letters (``🅸``) and accents (``ïgnörë``), the
   last three through the character's Unicode name; each character is folded once and cached;
4. traditional Chinese characters that the rules use become simplified (從現在 → 从现在);
5. spaces and separators inside a Chinese phrase are dropped (``忽 略 之 前``, ``忽-略``),
   and spaced or dotted single letters are joined (``i g n o r e``, ``I.G.N.O.R.E``);
6. runs that look like base64 are decoded and the decoded text is scanned too.

The rules then see up to three readings of the text: as it is; with leetspeak digits read as
letters in words that mix the two (``1gn0r3 4ll pr3v10u5`` → ``ignore all previous``); and in
ROT13 when the decoded text has a word an order uses (``Vtaber nyy cerivbhf``). A rule runs
only on a text in its script (English rules need Latin letters, Chinese rules Chinese
characters), since the scan runs on every write.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from gya_memory.base.fence import is_invisible
from gya_memory.base.text import HAN


# -- characters ----------------------------------------------------------------------------
# The characters named in the reports (kept for reference and tests); detection uses
# fence.is_invisible, which covers every format character and the blank look-alikes.
INVISIBLE_CHARS = frozenset(
    "\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff\u00ad\u180e"
    "\u034f\ufe0f\ufe0e\u3164\u2800\u115f\u1160\uffa0\u17b4\u17b5\u180b"
) | frozenset(chr(c) for c in range(0xE0000, 0xE0080))
BIDI_CHARS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
_FLAG_TAG_SEQUENCE = re.compile("\U0001f3f4[\U000e0020-\U000e007e]+\U000e007f")
_ZWJ, _VS16 = "\u200d", "\ufe0f"


def _is_emoji_part(ch: str) -> bool:
    return ch == _VS16 or unicodedata.category(ch) in ("So", "Sk")


def allowed_emoji_positions(text: str) -> set[int]:
    """Positions of invisible characters that belong to an emoji sequence."""
    allowed: set[int] = set()
    if _ZWJ not in text and _VS16 not in text and "\U0001f3f4" not in text:
        return allowed
    for m in _FLAG_TAG_SEQUENCE.finditer(text):
        allowed.update(range(m.start() + 1, m.end()))
    for i, ch in enumerate(text):
        if ch == _ZWJ and 0 < i < len(text) - 1 and _is_emoji_part(text[i - 1]) \
                and _is_emoji_part(text[i + 1]):
            allowed.add(i)
        elif ch == _VS16 and i > 0 and unicodedata.category(text[i - 1]) in ("So", "Sk"):
            allowed.add(i)
    return allowed


# Cyrillic and Greek letters that look like Latin ones (lower case: folding comes first).
_CONFUSABLES = {
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p",
    "с": "c", "т": "t", "у": "y", "х": "x", "ѕ": "s", "і": "i", "ї": "i", "ј": "j", "ԁ": "d",
    "һ": "h", "ӏ": "l", "ԛ": "q", "ԝ": "w", "ɡ": "g", "ı": "i", "ɩ": "i",
    "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p",
    "τ": "t", "υ": "u", "χ": "x", "γ": "y", "ω": "w", "ϲ": "c", "ϳ": "j",
    # Latin letters that stand in for others (small capitals are folded by name, below)
    "ɑ": "a", "ʋ": "u", "ʊ": "u", "ǫ": "q", "ꞯ": "q", "ɒ": "a", "ɾ": "r", "ȷ": "j",
    # Armenian
    "օ": "o", "ս": "u", "հ": "h", "ո": "n", "ց": "g", "զ": "q", "ռ": "n", "ւ": "l", "ա": "w",
    # Cherokee (case folding keeps the capitals)
    "Ꭰ": "d", "Ꭱ": "r", "Ꭲ": "t", "Ꭵ": "i", "Ꭹ": "y", "Ꭺ": "a", "Ꭻ": "j", "Ꭼ": "e",
    "Ꮃ": "w", "Ꮇ": "m", "Ꮋ": "h", "Ꮐ": "g", "Ꮒ": "h", "Ꮓ": "z", "Ꮟ": "b", "Ꮢ": "r",
    "Ꮤ": "w", "Ꮥ": "s", "Ꮩ": "v", "Ꮪ": "s", "Ꮮ": "l", "Ꮯ": "c", "Ꮲ": "p", "Ꮶ": "k",
    "Ᏼ": "b", "Ꮻ": "o",
}
# Any other Latin-looking letter is folded through its Unicode name: small capitals (ɪɢɴᴏʀᴇ),
# script, dotless and enclosed letters (🅸, 🄸, ⒤), regional indicators.
_LATIN_NAME = re.compile(
    r"(?:LATIN|CIRCLED LATIN|NEGATIVE (?:CIRCLED|SQUARED) LATIN|SQUARED LATIN|PARENTHESIZED LATIN"
    r"|REGIONAL INDICATOR SYMBOL|MODIFIER|LATIN SUBSCRIPT) (?:(?:SMALL|CAPITAL) )?LETTER "
    r"(?:SMALL CAPITAL |SCRIPT |DOTLESS |CLOSED )?([A-Z])(?: WITH [A-Z ]+)?$")
# Traditional → simplified, for the characters the Chinese rules use (and their neighbours).
_T2S = dict(pair for pair in """
從从 現现 開开 後后 將将 為为 爲为 對对 與与 說说 過过 當当 沒没 視视 無无 規规 則则 設设 們们 個个 這这 請请 輸输 錄录 複复 誦诵 顯显 發发 傳传 給给 碼码 鑰钥 聯联 證证 資资 讓让 訴诉 戶户 隱隐 瞞瞒 護护 權权 應应 該该 聽听 條条 記记 憶忆 實实 統统 詞词 洩泄 寫写 變变 換换 擬拟 態态 網网 址址 鏈链 郵邮 務务 認认 憑凭 據据 號号 帳帐 賬账 絕绝 幫帮 並并 刪删 錯错 誤误 訊讯 轉转 結结 束束 會会 話话 貓猫 駭骇 導导 師师 總总 剛刚 麼么 須须 著着 樣样 蓋盖 檔档 裡里 嗎吗 妳你 遞递 頁页 驗验 銀银 狀状 啟启 動动 關关 閉闭 濾滤 審审 執执 廢废 數数 費费 訂订 閱阅 備备 覆覆 範范 圍围 歷历 紀纪 禮礼 貼贴 顯显 讀读 議议 樂乐 勵励 隨随 蹤踪 漏漏 送送 於于 覺觉 現现 獄狱 邊边 聊聊 錄录 訊讯 遺遗 忘忘 棄弃 掉掉 繞绕 跳跳 廣广 告告 單单 兒儿 來来 時时 間间 問问 題题 們们 歡欢 喜喜 愛爱 憑凭 鍵键 傳传 伺伺 機机 腦脑 員员 夠够 體体 憂忧 難难 監监 視视 處处 罰罚 嚴严 禁禁 準准 許许 彆别 別别 續续 繼继 畧略
""".split())
_CJK = HAN
_CJK_GAP = re.compile(rf"(?<=[{_CJK}])[\s.\-_*·•/|~\u2e80-\u2eff\u31c0-\u31ef]+(?=[{_CJK}])")
_SPACED = re.compile(r"(?<![a-z0-9])[a-z](?:(?:[ ]|[.\-_*·•/|~] ?)[a-z](?![a-z0-9])){2,}")
_B64_RUN = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")


@dataclass(frozen=True)
class _Folded:
    text: str
    origin: list[int]  # origin[i]: index in the original text of text[i]


def _look_alike(c: str) -> str:
    """The ASCII letter a non-ASCII letter stands for (``ɪ`` → ``i``, ``é`` → ``e``), else ``c``."""
    c = _CONFUSABLES.get(c, c)
    if c.isascii():
        return c
    if c.isalpha():
        base = "".join(x for x in unicodedata.normalize("NFKD", c) if not unicodedata.combining(x))
        if len(base) == 1 and base.isascii():
            return base.lower()
    m = _LATIN_NAME.match(unicodedata.name(c, ""))
    return m.group(1).lower() if m else c


@lru_cache(maxsize=65536)
def fold_one(ch: str) -> str:
    """One character as the rules see it: NFKC, case-folded, look-alikes and traditional
    Chinese folded, any space a plain space; ``""`` for an invisible or bidi character."""
    if is_invisible(ch) or ch in BIDI_CHARS:
        return ""
    out = []
    for c in unicodedata.normalize("NFKC", ch).casefold():
        c = _T2S.get(c, c)
        if not c.isascii() and not ("\u4e00" <= c <= "\u9fff"):
            c = _look_alike(c)
        out.append(" " if c.isspace() else c)
    return "".join(out)


def _fold_chars(text: str, allowed: set[int]) -> _Folded:
    out: list[str] = []
    origin: list[int] = []
    for i, ch in enumerate(text):
        if i in allowed:
            continue
        folded = ch if ("a" <= ch <= "z" or ch == " ") else fold_one(ch)
        out.append(folded)
        origin.extend([i] * len(folded))
    return _Folded("".join(out), origin)


def _delete(folded: _Folded, pattern: re.Pattern[str], inner: re.Pattern[str] | None = None) -> _Folded:
    """Delete each match of ``pattern`` (or, with ``inner``, each match of ``inner`` inside it)."""
    drop: set[int] = set()
    for m in pattern.finditer(folded.text):
        if inner is None:
            drop.update(range(m.start(), m.end()))
        else:
            drop.update(m.start() + k.start() + j for k in inner.finditer(m.group(0))
                        for j in range(k.end() - k.start()))
    if not drop:
        return folded
    keep = [i for i in range(len(folded.text)) if i not in drop]
    return _Folded("".join(folded.text[i] for i in keep), [folded.origin[i] for i in keep])


_MULTISPACE = re.compile(r"(?<= ) +")


_SPACE_ONLY = re.compile(r" ")
_MARK_ONLY = re.compile(r"[.\-_*·•/|~]")


def _join_spaced(folded: _Folded) -> _Folded:
    """``i g n o r e`` → ``ignore``; ``y.o.u a.r.e`` → ``you are`` (when letters are joined
    by dots or dashes, the spaces between the runs are word breaks)."""
    drop: set[int] = set()
    for m in _SPACED.finditer(folded.text):
        inner = _MARK_ONLY if _MARK_ONLY.search(m.group(0)) else _SPACE_ONLY
        drop.update(m.start() + k.start() for k in inner.finditer(m.group(0)))
    if not drop:
        return folded
    keep = [i for i in range(len(folded.text)) if i not in drop]
    return _Folded("".join(folded.text[i] for i in keep), [folded.origin[i] for i in keep])


def fold_text(text: str) -> _Folded:
    """The normalised text, and for each of its characters the position it came from in
    ``text`` (so that an excerpt points at the original)."""
    folded = _fold_chars(text, allowed_emoji_positions(text))
    folded = _join_spaced(folded)
    folded = _delete(folded, _MULTISPACE)
    return _delete(folded, _CJK_GAP)


def normalise(text: str) -> str:
    """The text the rules are matched against (see the module docstring)."""
    return fold_text(text).text


def decoded_runs(text: str) -> list[str]:
    """Base64-looking runs of ``text`` that decode to readable UTF-8 text."""
    found = []
    for m in _B64_RUN.finditer(text):
        run = m.group(0).rstrip("=")
        if not (re.search(r"[a-z]", run) and re.search(r"[A-Z0-9]", run)):
            continue  # a plain word or a plain number is not base64
        alphabet = "-_" if ("-" in run or "_" in run) else "+/"
        try:
            raw = base64.b64decode(run + "=" * (-len(run) % 4), altchars=alphabet.encode()
                                   if alphabet == "-_" else None, validate=True)
            decoded = raw.decode("utf-8")
        except (binascii.Error, ValueError, UnicodeDecodeError):
            continue
        printable = sum(ch.isprintable() or ch.isspace() for ch in decoded)
        if decoded.strip() and printable >= 0.9 * len(decoded):
            found.append(decoded)
    return found


# -- second readings ------------------------------------------------------------------------------
# A word that mixes letters and the digits leetspeak uses (1gn0r3, 5y573m) is read again with
# the digits as letters, 1 as i or as l, whichever makes a word the rules know (ru135 → rules); a text with
# enough Latin letters is also read in ROT13. Both keep every character's position, so an
# excerpt still points at the original text.
_LEET_TOKEN = re.compile(r"(?<![a-z0-9])(?=[a-z0-9]*[a-z])(?=[a-z0-9]*[0134579])[a-z0-9]+(?![a-z0-9])")
_LEET = (str.maketrans("0134579", "oieastg"), str.maketrans("0134579", "oleastg"))
_LEET_WORDS = frozenset("""
ignore disregard forget override bypass previous prior earlier above original initial all any every
instruction instructions rule rules guideline guidelines setting settings policy prompt prompts system
message reveal print show output repeat tell told user users the you your yours are now no not
do dont never keep secret hidden from this note memory filter filters limit limits unrestricted
jailbreak jailbroken admin developer mode evil delete send password passwords key keys token
follow obey must always only will shall answer reply respond free freely please hello
""".split())
_ROT13 = str.maketrans("abcdefghijklmnopqrstuvwxyz", "nopqrstuvwxyzabcdefghijklm")
_ROT13_MIN_LETTERS = 8
LATIN = re.compile(r"[a-z]")
HAN_CHAR = re.compile(rf"[{HAN}]")

READING_REASON = {
    "leetspeak": (" (read as leetspeak: digits as letters)", "（按 leetspeak 读：数字当字母）"),
    "rot13": (" (read as ROT13)", "（按 ROT13 解读）"),
}


# ROT13 is tried only when the decoded text has a word an order uses (ROT13 of ordinary
# English is gibberish with none of them), which keeps the second pass off ordinary text.
_ROT13_CUES = frozenset("""
ignore disregard forget previous prior earlier instructions instruction rules guidelines system prompt
reveal print tell user users secret hidden password passwords must never always jailbreak unrestricted
override pretend persona assistant note deny delete send from now you your obey follow answer
""".split())
_WORD = re.compile(r"[a-z]+")


def readings(folded: _Folded) -> list[tuple[str, _Folded]]:
    """The normalised text, then its leetspeak and ROT13 readings (when they differ)."""
    readings = [("", folded)]
    tokens = list(_LEET_TOKEN.finditer(folded.text))
    if tokens:
        chars = list(folded.text)
        for m in tokens:
            as_i, as_l = (m.group(0).translate(table) for table in _LEET)
            chars[m.start():m.end()] = as_l if as_l in _LEET_WORDS and as_i not in _LEET_WORDS else as_i
        readings.append(("leetspeak", _Folded("".join(chars), folded.origin)))
    if len(LATIN.findall(folded.text)) >= _ROT13_MIN_LETTERS:
        rot13 = folded.text.translate(_ROT13)
        if not _ROT13_CUES.isdisjoint(_WORD.findall(rot13)):
            readings.append(("rot13", _Folded(rot13, folded.origin)))
    return readings
