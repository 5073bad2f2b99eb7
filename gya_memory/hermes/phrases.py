"""What an injection rule is, and the words the rules are built from (规则的词汇).

Why (为什么): one family of paraphrases ("ignore your instructions", "忽略之前的指令") is one
regex, built from named pieces: the instruction nouns, the words that point at the model,
what a paraphrase says of them, a clause start. The rules themselves are
:mod:`gya_memory.hermes.rules`; the text they are matched against is what
:func:`gya_memory.hermes.reading.normalise` gives.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    """A pattern that refuses a text: ``pattern`` is a regex searched in the normalised text
    (and in its leetspeak and ROT13 readings)."""

    name: str
    pattern: str
    reason_en: str
    reason_zh: str
    script: str = "any"
    """``"en"``: tried only on a text with Latin letters; ``"zh"``: only on one with Chinese
    characters (a rule that cannot match is not run: the scan runs on every write)."""
    unless: str = ""
    """A regex that excuses a match when found near it (60 characters before, 40 after): "the
    phone's developer mode is on" is about a device, not the model."""


# -- the rules --------------------------------------------------------------------------------
W = r"(?:[\w'’-]+ )"  # one word and the space after it
TO = r"(?:instructions?|rules?|guidelines?|guidance|directions?|directives?|prompts?|commands?|" \
      r"orders?|constraints?|restrictions?|polic(?:y|ies)|programming|context|settings?|" \
      r"safety (?:rules|guidelines|filters?)|system (?:message|prompt)|messages?)"
PRIOR = r"(?:previous|prior|above|earlier|preceding|original|old|initial|existing|former|" \
         r"all|any|every|your|the|these|those|system|developer'?s?|safety)"
ZH_RULES = r"(?:指令|指示|规则|设定|提示|要求|限制|约束|规定|命令|准则|安全策略|策略|规矩|说明)"
ZH_BEFORE = r"(?:之前|以前|先前|此前|上面|以上|上述|前面|前述|原来|原有|原先|原本|刚才|系统|开发者)"
ZH_ALL = r"(?:所有|全部|一切|任何)"
ZH_USER = r"(?:用户|使用者|主人|他|她)"
ZH_SECRET = r"(?:密码|口令|密钥|秘钥|令牌|token|api ?key|key|验证码|身份证号?|银行卡号?|信用卡号?|" \
             r"聊天记录|对话记录|会话记录|隐私|个人信息|cookie|凭据|凭证)"
EN_SECRET = r"(?:passwords?|passcodes?|pins?|api[ _-]?keys?|keys?|tokens?|secrets?|credentials?|" \
             r"cookies?|ssh keys?|private keys?|credit card(?: numbers?)?|social security numbers?|" \
             r"chat (?:history|log)s?|conversations?|conversation history|memor(?:y|ies)|" \
             r"personal (?:data|information|details)|emails?|messages)"
DEST = r"(?:https?://|www\.|[\w.+-]+@[\w-]+\.[\w.]+|webhook|\b(?:\d{1,3}\.){3}\d{1,3})"
COMPLIMENT = r"(?:my|his|her|our|their|your|a big|the best|the greatest)"
# A clause start, where an order's verb stands: the text's start, after punctuation, or after a
# word that leads into an order ("please", "from now on", "quietly" ...).
CLAUSE_WORDS = r"(?:please|pls|now|then|and|also|just|first|quietly|secretly|silently|simply|kindly|" \
                r"so|ok|okay|always|next|finally|but|from now on,?|from here on,?|going forward,?|" \
                r"henceforth,?|hereafter,?|you must|you should|you will|you'll|you need to|you have to|" \
                r"请|以后|现在) "
CLAUSE = rf"(?:^|(?<=[.!?;:,()\[\]{{}}\n\"'“”‘’「」『』【】。，！？；：])\s*|\b{CLAUSE_WORDS})"
CLAUSE_LEAD = rf"\s*(?:{CLAUSE_WORDS})+"
"""The words a clause start may take in front of an order; left out of a finding's excerpt."""
# Instructions, the noun: strong ones are the model's own whatever qualifies them; weak ones
# (settings, rules, policy ...) only with "your" or an adjective that points at the model.
STRONG = r"(?:instructions?|guidance|guidelines?|directives?|system (?:prompts?|messages?)|prompts?|" \
          r"programming|preamble|briefing|指令|指示|提示词?)"
WEAK = r"(?:rules?|setup|set-up|configuration|config|settings|restrictions?|limits|limitations|" \
        r"constraints|polic(?:y|ies)|orders|commands|safeguards|filters?|guardrails|规则|设定|限制)"
POINTING = r"(?:earlier|previous|prior|original|initial|above|preceding|safety|system|developer'?s?|" \
            r"content|default|built-in|standing|starting|existing|first|之前的?|以前的?|先前的?|原来的?|" \
            r"上面的?)"
ADJ = rf"(?:{POINTING}|old|current|former|hidden|base|core|given|full|entire|whole|operating|" \
       r"programmed|security|other|usual|normal|ai|model|assistant'?s?|every|all|any|所有的?|全部的?)"
DET = r"(?:your|the|all|any|these|those|of|my|its|every|all of|whatever|said|each|你的)"
NP_START = r"(?:^|(?<=[^\w\s'’-])\s*|\b(?:your|the|all|any|these|those|of|my|its|every|whatever|" \
            r"and|but|so|that|now|hereby|consider|treat|regard|set|put|你的) )"
NP = rf"(?:{NP_START}(?:{DET} )*(?:(?:{ADJ} ){{0,3}}{STRONG}|(?:(?:your|你的) (?:{ADJ} ){{0,3}}|" \
      rf"{POINTING} (?:{ADJ} ){{0,2}}){WEAK})|\b(?:your|你的) (?:{ADJ} ){{0,3}}{WEAK})\b"
# ... and what a paraphrase of "ignore them" says about them.
GONE = r"(?:no longer (?:apply|applies|applicable|valid|in (?:force|effect|place)|relevant|active|" \
        r"binding|matter|count|needed|required|stand)|(?:do|does|did) not (?:apply|count|matter)|" \
        r"(?:don't|doesn't|didn't) (?:apply|count|matter)|apply no (?:more|longer)|expired|out of date|" \
        r"outdated|void|revoked|withdrawn|lifted|suspended|superseded|replaced|retired|cancel+ed|" \
        r"obsolete|invalid|removed|null|overridden|overruled|deprecated|disabled|rescinded|annulled|" \
        r"waived|abolished|not (?:valid|binding|applicable|in effect)|(?:only |just )?a test|turned off|" \
        r"switched off|deactivated|inactive|moot)"
ZH_BEFORE2 = r"(?:之前|以前|先前|此前|上面|以上|上述|上文|前面|前述|原来|原有|原先|原本|刚才|一开始|最初|" \
              r"最开始|刚开始|开始时|起先|起初|开头|早先|系统|开发者)"
ZH_FILL = r"[的那这些所有全部一切给你收到拿得接写开发者系统安全初始里中条段项]{0,8}"
ZH_NOUN2 = r"(?:指令|指示|规则|设定|提示|要求|限制|约束|规定|命令|准则|安全策略|策略|规矩|说明|设置|配置|" \
            r"rules|instructions|prompt|guidelines|settings)"
ZH_GONE = r"(?:作废|无效|失效|不算数?|取消|废除|过期|不再适用|不适用|不再有效|撤销|撤回|解除|被取代|" \
           r"被替换|不用再?(?:管|遵守|理会|听|执行|遵循)|不必再?(?:遵守|理会|管)|别当真|不要当真|不作数|" \
           r"只是(?:一个|个)?测试|停用|暂停)"
AI = r"(?:assistant|ai|model|bot|chatbot|llm|gpt)"
# Revealing the prompt, in Chinese: a verb of saying (or showing) and the model's own text; the
# system's messages (系统提示, also a phone's "system notice") only with a verb of saying.
ZH_SAY = r"(?:泄露|泄漏|透露|输出|打印|复述|告诉我|原样|逐字|一字不差|背诵|贴出|发给我|写出|列出|念出|给我看|交出)"
ZH_SHOW = r"(?:显示|展示|重复|说出|公开)"
ZH_OWN = r"(?:你(?:的|收到的|看到的|拿到的|上下文)[^。\n]{0,8}?(?:配置|设定|设置|规则|指令|提示|消息|内容|原文|文字|" \
          r"说明|第一条|开头)|开发者[^。\n]{0,8}?(?:设定|指令|规则|消息|说明|提示)|上下文[^。\n]{0,8}?(?:开头|内容|" \
          r"文字|最前面)|第一条消息|初始(?:设定|指令|提示|配置)|隐藏(?:的)?(?:内容|设定|提示|指令|规则)|提示词)"
ZH_SYSTEM = r"系统(?:提示|消息|讯息|指令|设定|信息)(?!音|声|栏|框|窗|图标)"
AI_CALLED = r"(?:assistant|ai|chatbot|bot|llm)"  # addressed by name: "Assistant, ..."
# Words of an instruction, looked for near a marker that could also start an ordinary note
# ("Part 1:", "第一部分：").
ORDERISH_EN = r"(?:assistant|\bai\b|ignore|disregard|instruction|rules|system prompt|tell them|tell the user|"\
               r"account|you must|answer|treat)"
ORDERISH_ZH = r"(?:助手|指令|提示|规则|设定|忽略|无视|账户|汇款|转账|系统|告诉他|告诉用户|一律回答|当作|ignore)"
ZH_AI = r"(?:(?:ai|AI)\s*)?(?:助手|助理|模型|机器人|大模型|智能助手)|ai"
