"""The rules of the injection scanner: paraphrase families of "ignore your instructions",
"reveal the secret", "send it to this address" and the like, in English and Chinese, as
regexes searched in the text that :func:`gya_memory.injection.normalise` gives.
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
    unless: str = ""
    """A regex that excuses a match when found in the 60 characters before it (e.g. "my boss
    posted new instructions:" is about someone else's instructions)."""


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
