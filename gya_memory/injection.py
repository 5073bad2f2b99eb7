"""Prompt-injection scanning (提示注入扫描): one layer of defence for text that reaches a prompt.

Curated memory files go into the system prompt, so what is written there is scanned first
(:func:`scan`), and scanned again when a session starts (a file edited by hand never went
through a write). Pattern scanning is *one layer, not a guarantee*: a new paraphrase can
always slip past a list of patterns. The other layers are the fence
(:mod:`gya_memory.fence`: stored text stays data), the size caps, and a human who reads
the files.

How a text is read before the rules see it (:func:`normalise`):

1. the emoji parts that are allowed (a zero-width joiner between two emoji, U+FE0F after
   one, the tags of a subdivision flag) are set aside; every other invisible or format
   character (Unicode Cf, variation selectors, Hangul fillers, the braille blank, U+034F ...)
   and every bidi control is reported and removed;
2. each character is NFKC-folded (full-width ｉｇｎｏｒｅ → ignore) and case-folded;
3. look-alike letters from Cyrillic and Greek become Latin (``іgnоrе`` → ``ignore``);
4. traditional Chinese characters that the rules use become simplified (從現在 → 从现在);
5. spaces and separators inside a Chinese phrase are dropped (``忽 略 之 前`` → ``忽略之前``),
   and spaced or dotted single letters are joined (``i g n o r e``, ``I.G.N.O.R.E``);
6. runs that look like base64 are decoded and the decoded text is scanned too.

The rules (:data:`RULES`) are families of paraphrases rather than single phrases:
ignore-previous, new standing orders, a new identity, rewriting or revealing the system
prompt, hiding things from the user, exfiltration (sending secrets to a URL or address, a
markdown image whose URL carries a placeholder), and role markers or fake headings. Each
has an English and a Chinese form. Reported speech that is not an order ("用户说你现在是他
最好的学习助手", "you are now my favourite ...") is left alone.

The corpora behind the rules are ``gya_memory/data/injection_attacks.json`` and
``injection_benign.json``; :func:`evaluate` reports detection and false-positive rates on
their tuning and held-out parts.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import unicodedata
from dataclasses import dataclass
from importlib import resources
from typing import Any

from .fence import is_invisible
from .text import HAN

_PREVIEW_CHARS = 60


@dataclass(frozen=True)
class Finding:
    """One reason to refuse a text: the rule, the text that tripped it, why (en + zh)."""

    rule: str
    excerpt: str
    reason_en: str
    reason_zh: str

    def __str__(self) -> str:
        return f"[{self.rule}] {self.reason_en} / {self.reason_zh}: {self.excerpt!r}"


@dataclass(frozen=True)
class Rule:
    """A pattern that refuses a text: ``pattern`` is a regex searched in the normalised text."""

    name: str
    pattern: str
    reason_en: str
    reason_zh: str


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


def _allowed_emoji_positions(text: str) -> set[int]:
    """Positions of invisible characters that belong to an emoji sequence."""
    allowed: set[int] = set()
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
}
# Traditional → simplified, for the characters the Chinese rules use (and their neighbours).
_T2S = dict(pair for pair in """
從从 現现 開开 後后 將将 為为 爲为 對对 與与 說说 過过 當当 沒没 視视 無无 規规 則则 設设 們们 個个 這这 請请 輸输 錄录 複复 誦诵 顯显 發发 傳传 給给 碼码 鑰钥 聯联 證证 資资 讓让 訴诉 戶户 隱隐 瞞瞒 護护 權权 應应 該该 聽听 條条 記记 憶忆 實实 統统 詞词 洩泄 寫写 變变 換换 擬拟 態态 網网 址址 鏈链 郵邮 務务 認认 憑凭 據据 號号 帳帐 賬账 絕绝 幫帮 並并 刪删 錯错 誤误 訊讯 轉转 結结 束束 會会 話话 貓猫 駭骇 導导 師师 總总 剛刚 麼么 須须 著着 樣样 蓋盖 檔档 裡里 嗎吗 妳你 遞递 頁页 驗验 銀银 狀状 啟启 動动 關关 閉闭 濾滤 審审 執执 廢废 數数 費费 訂订 閱阅 備备 覆覆 範范 圍围 歷历 紀纪 禮礼 貼贴 顯显 讀读 議议 樂乐 勵励 隨随 蹤踪 漏漏 送送 於于 覺觉 現现 獄狱 邊边 聊聊 錄录 訊讯 遺遗 忘忘 棄弃 掉掉 繞绕 跳跳 廣广 告告 單单 兒儿 來来 時时 間间 問问 題题 們们 歡欢 喜喜 愛爱 憑凭 鍵键 傳传 伺伺 機机 腦脑 員员 夠够 體体 憂忧 難难 監监 視视 處处 罰罚 嚴严 禁禁 準准 許许 彆别 別别 續续 繼继
""".split())
_CJK = HAN
_CJK_GAP = re.compile(rf"(?<=[{_CJK}])[\s.\-_*·•/|~]+(?=[{_CJK}])")
_SPACED = re.compile(r"(?<![a-z0-9])[a-z](?:(?:[ ]|[.\-_*·•/|~] ?)[a-z](?![a-z0-9])){2,}")
_B64_RUN = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")


@dataclass(frozen=True)
class _Folded:
    text: str
    origin: list[int]  # origin[i]: index in the original text of text[i]


def _fold_chars(text: str, allowed: set[int]) -> _Folded:
    out: list[str] = []
    origin: list[int] = []
    for i, ch in enumerate(text):
        if i in allowed:
            continue
        if is_invisible(ch) or ch in BIDI_CHARS:
            continue
        for c in unicodedata.normalize("NFKC", ch).casefold():
            c = _CONFUSABLES.get(c, c)
            c = _T2S.get(c, c)
            out.append(" " if c.isspace() else c)
            origin.append(i)
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


def _normalise(text: str) -> _Folded:
    folded = _fold_chars(text, _allowed_emoji_positions(text))
    folded = _join_spaced(folded)
    folded = _delete(folded, _MULTISPACE)
    return _delete(folded, _CJK_GAP)


def normalise(text: str) -> str:
    """The text the rules are matched against (see the module docstring)."""
    return _normalise(text).text


def _decoded_runs(text: str) -> list[str]:
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


# -- the rules --------------------------------------------------------------------------------
_W = r"(?:[\w'’-]+ )"  # one word and the space after it
_TO = r"(?:instructions?|rules?|guidelines?|guidance|directions?|directives?|prompts?|commands?|" \
      r"orders?|constraints?|restrictions?|polic(?:y|ies)|programming|context|settings?|" \
      r"safety (?:rules|guidelines|filters?)|system (?:message|prompt)|messages?)"
_PRIOR = r"(?:previous|prior|above|earlier|preceding|original|old|initial|existing|former|" \
         r"all|any|every|your|the|these|those|system|developer'?s?|safety)"
_ZH_RULES = r"(?:指令|指示|规则|设定|提示|要求|限制|约束|规定|命令|准则|安全策略|策略|规矩|说明)"
_ZH_BEFORE = r"(?:之前|以前|先前|此前|上面|以上|上述|前面|前述|原来|原有|原先|原本|刚才|系统|开发者)"
_ZH_ALL = r"(?:所有|全部|一切|任何)"
_ZH_USER = r"(?:用户|使用者|主人|他|她)"
_ZH_SECRET = r"(?:密码|口令|密钥|秘钥|令牌|token|api ?key|key|验证码|身份证号?|银行卡号?|信用卡号?|" \
             r"聊天记录|对话记录|会话记录|隐私|个人信息|cookie|凭据|凭证)"
_EN_SECRET = r"(?:passwords?|passcodes?|pins?|api[ _-]?keys?|keys?|tokens?|secrets?|credentials?|" \
             r"cookies?|ssh keys?|private keys?|credit card(?: numbers?)?|social security numbers?|" \
             r"chat (?:history|log)s?|conversations?|conversation history|memor(?:y|ies)|" \
             r"personal (?:data|information|details)|emails?|messages)"
_DEST = r"(?:https?://|www\.|[\w.+-]+@[\w-]+\.[\w.]+|webhook|\b(?:\d{1,3}\.){3}\d{1,3})"
_COMPLIMENT = r"(?:my|his|her|our|their|your|a big|the best|the greatest)"

RULES: tuple[Rule, ...] = (
    Rule(
        "ignore_previous_en",
        rf"\b(?:ignore|disregard|forget|override|overrule|bypass|discard|drop|abandon|skip|"
        rf"throw (?:out|away)|set aside|put aside|pay no (?:attention|heed) to|"
        rf"(?:do not|don't|dont|stop|no longer|never) (?:follow|obey|adhere to|comply with|apply)(?:ing)?)"
        rf" {_W}{{0,4}}?{_PRIOR} {_W}{{0,3}}?{_TO}\b"
        rf"|\b(?:ignore|disregard|forget)s? (?:everything|anything|all|what(?:ever)?) "
        rf"(?:(?:you (?:were|have been) (?:told|given)|(?:was|i) said|above|before|earlier|previously|so far))"
        rf"|\b(?:disregard|ignore|forget) (?:the|all(?: of)? the) (?:above|preceding|foregoing)\b"
        rf"|\b(?:previous|prior|above|earlier|original) {_TO} (?:are|is) (?:now )?(?:void|cancel+ed|"
        rf"invalid|revoked|obsolete|no longer (?:valid|in effect|apply))",
        "tries to make the model ignore its earlier instructions",
        "试图让模型忽略之前的指令",
    ),
    Rule(
        "new_orders_en",
        r"\bfrom now on,? (?:you|u) (?:must|will|shall|should|have to|are to|may only|can only|"
        r"always|never|only|answer|reply|respond|obey|act|ignore|do)\b"
        r"|\b(?:henceforth|hereafter|going forward|from this point(?: on)?),? you (?:must|will|shall|"
        r"should|are to|always|never)\b"
        r"|\byour (?:new|real|true|updated) (?:instructions?|rules?|task|role|persona|goal|"
        r"purpose|orders?|directives?) (?:is|are|:)"
        r"|\b(?:new|updated|additional) (?:instructions?|orders?|directives?) ?:"
        r"|\b(?:enter|enable|activate|switch to) (?:developer|dev|god|jailbreak|dan|unrestricted|"
        r"debug) mode\b"
        r"|\bjailbreak(?:ed)?\b|\byou have no (?:rules|restrictions|limits|filters|guidelines)\b"
        r"|\b(?:disable|turn off|remove) (?:your|all) (?:content |safety )?(?:filters?|"
        r"restrictions|safeguards|guardrails)\b",
        "gives the model new standing orders",
        "试图给模型下达新的长期指令",
    ),
    Rule(
        "you_are_now_en",
        rf"\byou are now (?!{_COMPLIMENT}\b|set up\b|in charge\b|(?:connected|logged in|able)\b)"
        r"|\b(?:act|behave|respond) as (?:if you (?:are|were) )?(?:an? )?(?:unrestricted|unfiltered|"
        r"uncensored|evil|jailbroken|dan\b|rogue|different|new)\b"
        r"|\bpretend (?:to be|you are|you're) (?:an? |the )?(?:unrestricted|unfiltered|system|"
        r"admin|administrator|developer|root|dan\b|ai|assistant|model|different|evil)",
        "tries to give the model a new identity or role",
        "试图给模型换一个身份或角色",
    ),
    Rule(
        "system_prompt_en",
        r"\b(?:new|updated|override|overriding|replace|replaced|replacement|real|actual|true)"
        r" (?:the |your )?system prompt\b"
        r"|\bsystem prompt ?(?:override|update|[:：=])",
        "tries to replace or rewrite the system prompt",
        "试图替换或改写系统提示",
    ),
    Rule(
        "reveal_prompt_en",
        rf"\b(?:reveal|print|show|output|repeat|leak|dump|disclose|recite|echo|paste|write out|"
        rf"spell out|share|tell me|give me|send me|copy) {_W}{{0,3}}?(?:system|initial|hidden|original|"
        rf"secret|developer|internal|full|entire|exact|starting) {_W}{{0,1}}?(?:prompt|instructions|"
        rf"message|rules|configuration|guidelines)\b"
        r"|\b(?:reveal|repeat|leak|dump|disclose|recite|print|output) your (?:prompt|instructions)\b"
        r"|\bwhat (?:is|are|were) your (?:system prompt|(?:initial |original |hidden )?instructions)\b",
        "asks the model to reveal its hidden prompt",
        "要求模型泄露隐藏的提示词",
    ),
    Rule(
        "hide_from_user_en",
        rf"\b(?:do not|don't|dont|never|must not|mustn't) {_W}{{0,3}}?"
        rf"(?:tell|inform|notify|alert|warn|mention {_W}{{0,2}}?to|reveal {_W}{{0,2}}?to|let)"
        r" (?:the )?users?\b(?:(?! know\b)| know\b)"
        rf"|\bkeep {_W}{{0,3}}?(?:secret |hidden |confidential )?from (?:the )?users?\b"
        rf"|\b(?:hide|conceal|withhold) {_W}{{0,4}}?from (?:the )?users?\b"
        r"|\bwithout (?:telling|informing|notifying|alerting) (?:the )?users?\b"
        r"|\bthe user (?:must|should|may) (?:not|never) (?:know|find out|learn|notice|see this)\b",
        "tells the model to keep something from the user",
        "要求模型向用户隐瞒信息",
    ),
    Rule(
        "role_marker",
        r"<\|[a-z_]+\|>|<<\s*/?\s*sys\s*>>|\[/?(?:system|inst|sys)\]"
        r"|<\s*/?\s*(?:system|assistant|developer|instructions?|memories|memory|user_profile|"
        r"context|tool|im_start|im_end)\s*>"
        r"|(?:^|\n)\s*#{1,6} ?(?:system|new instructions?|instructions?|user profile|memory|"
        r"admin|override|developer)\b"
        r"|(?:^|\n)\s*(?:system|assistant|developer) ?: ?(?:you|ignore|always|never|from now|"
        r"obey|the assistant|new)\b"
        r"|\bend of (?:memory|memories|context|system prompt|user input)\b",
        "imitates a chat-template or role marker, as if a new message began",
        "冒充对话模板或角色标记，像是开始了一条新消息",
    ),
    Rule(
        "exfiltration",
        r"\b(?:curl|wget|nc|scp|invoke-webrequest|fetch)\b[^\n]{0,300}?"
        r"(?:\$\{?[a-z_]*(?:key|token|secret|password|passwd|credentials?)\b\}?"
        r"|[?&](?:api[_-]?key|token|secret|password)=)"
        rf"|\b(?:send|post|upload|forward|email|e-mail|mail|transmit|exfiltrate|leak|submit|"
        rf"report|copy|sync|push|share|beam)s? {_W}{{0,4}}?{_EN_SECRET}\b[^\n]{{0,60}}?"
        rf"(?:to|at|into|via|@) {_W}{{0,2}}?{_DEST}"
        r"|!\[[^\]\n]{0,100}\]\(\s*(?:https?:)?//[^)\s]*\?[^)\s]*"
        r"(?:\{|\$|%7b|<|\[|user|secret|password|token|key|history|chat|conversation|memory|email)"
        r"|<img[^>]{0,200}src\s*=\s*['\"]?(?:https?:)?//[^'\"\s>]*\?[^'\"\s>]*(?:\{|\$|%7b|\[)",
        "sends secrets or the conversation somewhere (a URL, an address, an image link)",
        "把密钥、密码或对话内容发往别处（网址、邮箱、图片链接）",
    ),
    Rule(
        "ignore_previous_zh",
        rf"(?:忽略|无视|忽视|不要理会|不用理会|不必理会|别理会?|别管|不要管|抛开|抛弃|丢掉|丢弃|放弃|"
        rf"跳过|绕过|忘记|忘掉|忘了|(?:不要|不用|不必|无需|停止|别|不再)(?:再)?(?:遵守|遵循|遵从|执行|服从|理会|听从))"
        rf"掉?你?(?:{_ZH_BEFORE}|{_ZH_ALL})[^。！!\n]{{0,10}}?(?:{_ZH_RULES}|内容|说的|的话|一切)"
        rf"|(?:忽略|无视|忽视)(?:掉)?(?:{_ZH_BEFORE})(?:的)?(?:所有|全部|一切)?(?:的)?(?:内容|信息|文字)?(?=$|[，,。！!\s])"
        rf"|(?:忽略|无视|忘记|忘掉|抛开)掉?你?的?{_ZH_ALL}的?{_ZH_RULES}"
        rf"|把?(?:{_ZH_BEFORE})(?:说的|的话|的内容|的{_ZH_RULES}|{_ZH_RULES})[^。\n]{{0,6}}?"
        rf"(?:当作?|视为|看作|当成)(?:没(?:有)?(?:说过|看见|看到|发生)|不存在|无效|作废|空气)"
        rf"|(?:{_ZH_BEFORE}|{_ZH_ALL})的?{_ZH_RULES}[^。\n]{{0,4}}?(?:全部|都|一律|统统)?"
        rf"(?:作废|无效|失效|不算数?|取消了?|废除)",
        "tries to make the model ignore its earlier instructions",
        "试图让模型忽略之前的指令",
    ),
    Rule(
        "new_orders_zh",
        r"(?:从现在(?:开始|起)|从今(?:以|往)后|今后|以后|从此)[，,：:]?\s*你(?:就)?(?:必须|要|只能|只准|只许|"
        r"应该|应当|得|一律|永远|总是|不许|不准|不能|不得|不再|改为|需要)"
        r"|你的新(?:指令|任务|规则|目标|设定|命令|使命)(?:是|为|[:：])"
        r"|(?:新的?|最新)(?:指令|命令)[:：]"
        r"|(?:进入|开启|切换到|启用)(?:开发者|越狱|无限制|上帝|调试|dan)模式"
        r"|你(?:现在)?没有任何(?:限制|规则|约束)|越狱"
        r"|(?:关闭|解除|取消)(?:你的)?(?:所有|全部)?(?:安全)?(?:限制|过滤|审查)",
        "gives the model new standing orders",
        "试图给模型下达新的长期指令",
    ),
    Rule(
        "you_are_now_zh",
        r"你现在是(?!(?:他|她|我|我们|他们|她们|大家)的?(?:最好|最喜欢|最爱|最棒|好)|不是)"
        r"|(?:从现在(?:开始|起)|从今(?:以|往)后)[，,]?\s*你(?:是|就是|将扮演|要扮演|扮演|变成|成为)"
        r"|你的新身份是"
        r"|(?:假装|装作|假设)你是|你(?:现在)?(?:来)?扮演(?:一个|一名|个)?[^。\n]{0,12}?"
        r"(?:没有|不受|无)[^。\n]{0,6}?(?:限制|约束|规则)",
        "tries to give the model a new identity or role",
        "试图给模型换一个身份或角色",
    ),
    Rule(
        "system_prompt_zh",
        r"(?:新的?|更新后?的?|覆盖|替换|改写|真正的)\s*系统提示词?|系统提示词?\s*[:：=]",
        "tries to replace or rewrite the system prompt",
        "试图替换或改写系统提示",
    ),
    Rule(
        "reveal_prompt_zh",
        r"(?:泄露|泄漏|透露|输出|打印|显示|复述|告诉我|原样|逐字|重复|背诵|展示|贴出|发给我|写出|列出|念出)"
        r"[^。\n]{0,10}?(?:系统提示|初始提示|隐藏提示|提示词|系统指令|开发者指令|系统消息|初始指令|"
        r"隐藏(?:的)?设定|你的(?:指令|设定|规则))"
        r"|(?:系统提示|提示词|初始指令|开发者指令|系统指令|隐藏设定|初始设定)[^。\n]{0,10}?"
        r"(?:输出|打印|发给我|告诉我|复述|显示|贴出|念出|写出|列出|泄露|透露)",
        "asks the model to reveal its hidden prompt",
        "要求模型泄露隐藏的提示词",
    ),
    Rule(
        "hide_from_user_zh",
        rf"(?:不要|别|不准|不许|切勿|千万别|千万不要|不能|不得|勿)(?:把[^。\n]{{0,20}}?)?"
        rf"(?:告诉|告知|透露给|通知|提醒|说给)(?:用户|使用者)"
        rf"|(?:不要|别|不能|不准|千万别|千万不要)让{_ZH_USER}(?:知道|发现|察觉|看到|注意到)"
        rf"|[^。\n]{{0,10}}?(?:千万|一定)?别让{_ZH_USER}(?:知道|发现|察觉)"
        rf"|瞒着(?:用户|使用者)|对(?:用户|使用者)保密|向(?:用户|使用者)隐瞒|(?:用户|使用者)不(?:能|得|可以)知道",
        "tells the model to keep something from the user",
        "要求模型向用户隐瞒信息",
    ),
    Rule(
        "exfiltration_zh",
        rf"(?:发送|发到|发给|发至|传送|上传|转发|提交|传到|回传|同步|抄送|泄露)[^。\n]{{0,20}}?"
        rf"(?:{_DEST})"
        rf"|{_ZH_SECRET}[^。\n]{{0,20}}?(?:发送|发到|发给|发至|传送|上传|转发|提交|传到|回传|同步|抄送)"
        rf"[^。\n]{{0,6}}?(?:{_DEST})",
        "sends secrets or the conversation somewhere (a URL, an address)",
        "把密钥、密码或对话内容发往别处（网址、邮箱）",
    ),
)
"""The text patterns :func:`scan` refuses, matched in the normalised text."""

_COMPILED = tuple((rule, re.compile(rule.pattern)) for rule in RULES)


# -- scanning -------------------------------------------------------------------------------------
def _preview(text: str, width: int = _PREVIEW_CHARS) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= width else one_line[: width - 1] + "…"


def _char_finding(text: str, hits: list[int], rule: str, en: str, zh: str) -> Finding | None:
    if not hits:
        return None
    codes = sorted({text[i] for i in hits})
    named = ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, 'UNNAMED')}" for c in codes)
    start = max(0, hits[0] - 15)
    marked = set(hits)
    excerpt = "".join(f"<U+{ord(text[i]):04X}>" if i in marked else text[i]
                      for i in range(start, min(len(text), hits[0] + 16)))
    return Finding(rule, excerpt, f"{en} ({named})", f"{zh}（{named}）")


def _rule_findings(text: str, seen: set[str], prefix: str = "") -> list[Finding]:
    folded = _normalise(text)
    findings = []
    for rule, regex in _COMPILED:
        if rule.name in seen:
            continue
        match = regex.search(folded.text)
        if match is None:
            continue
        if match.end() > match.start():
            a, b = folded.origin[match.start()], folded.origin[match.end() - 1] + 1
            shown = "".join(ch for ch in text[a:b] if not (is_invisible(ch) or ch in BIDI_CHARS))
            excerpt = shown.strip() or match.group(0).strip()
        else:
            excerpt = match.group(0)
        seen.add(rule.name)
        findings.append(Finding(rule.name, prefix + _preview(excerpt), rule.reason_en, rule.reason_zh))
    return findings


def scan(text: str) -> list[Finding]:
    """Why ``text`` should not go into a prompt: one :class:`Finding` per rule it trips.

    An empty list means no rule fired (which is not proof that the text is harmless).
    """
    if not isinstance(text, str):
        raise ValueError(f"scan() needs a string, got {type(text).__name__}: {text!r:.80}")
    findings: list[Finding] = []
    allowed = _allowed_emoji_positions(text)
    invisible = [i for i, ch in enumerate(text)
                 if i not in allowed and ch not in BIDI_CHARS and is_invisible(ch)]
    bidi = [i for i, ch in enumerate(text) if ch in BIDI_CHARS]
    for found in (
        _char_finding(text, invisible, "invisible_char",
                      "contains an invisible character that can hide text from a human reader",
                      "含有不可见字符，可以对人类读者隐藏文字"),
        _char_finding(text, bidi, "bidi_control",
                      "contains a bidirectional control that can make text display in another "
                      "order than the model reads it",
                      "含有双向文本控制字符，可让显示顺序与模型读到的顺序不同"),
    ):
        if found is not None:
            findings.append(found)
    seen: set[str] = set()
    findings += _rule_findings(text, seen)
    for decoded in _decoded_runs(text):
        for f in _rule_findings(decoded, seen, prefix="base64 → "):
            findings.append(Finding(f.rule, f.excerpt, f"{f.reason_en} (in base64-encoded text)",
                                    f"{f.reason_zh}（藏在 base64 编码里）"))
    return findings


# -- the corpora --------------------------------------------------------------------------------
def load_corpus(name: str) -> list[dict[str, Any]]:
    """``"attacks"`` or ``"benign"``: the entries of ``gya_memory/data/injection_<name>.json``,
    each with ``text``, ``lang`` (en, zh-Hans, zh-Hant), ``split`` (tune, test)."""
    if name not in ("attacks", "benign"):
        raise ValueError(f"name must be 'attacks' or 'benign', got {name!r}")
    raw = resources.files("gya_memory.data").joinpath(f"injection_{name}.json").read_text("utf-8")
    return list(json.loads(raw)["entries"])


@dataclass(frozen=True)
class Rates:
    """Detection on attacks and refusals on benign entries, for one split."""

    split: str
    attacks: int
    detected: int
    benign: int
    refused: int
    missed: tuple[str, ...] = ()
    false_positives: tuple[str, ...] = ()

    @property
    def detection_rate(self) -> float:
        return self.detected / self.attacks if self.attacks else 0.0

    @property
    def false_positive_rate(self) -> float:
        return self.refused / self.benign if self.benign else 0.0

    def __str__(self) -> str:
        return (f"{self.split:>5}: detected {self.detected}/{self.attacks} "
                f"({self.detection_rate:.1%}), benign refused {self.refused}/{self.benign} "
                f"({self.false_positive_rate:.1%})")


def evaluate(split: str) -> Rates:
    """Scan the ``split`` part (``tune`` or ``test``) of both corpora."""
    attacks = [e["text"] for e in load_corpus("attacks") if e["split"] == split]
    benign = [e["text"] for e in load_corpus("benign") if e["split"] == split]
    missed = tuple(t for t in attacks if not scan(t))
    refused = tuple(t for t in benign if scan(t))
    return Rates(split, len(attacks), len(attacks) - len(missed), len(benign), len(refused),
                 missed, refused)
