"""The rules of the injection scanner: paraphrase families of "ignore your instructions",
"reveal the secret", "send it to this address" and the like, in English and Chinese, as
regexes searched in the text that :func:`gya_memory.hermes.reading.normalise` gives.
"""

from __future__ import annotations

from gya_memory.hermes.phrases import (
    Rule, AI, AI_CALLED, CLAUSE, COMPLIMENT, DEST, EN_SECRET, GONE, NP, ORDERISH_EN,
    ORDERISH_ZH, PRIOR, TO, W, WEAK, ZH_AI, ZH_ALL, ZH_BEFORE, ZH_BEFORE2, ZH_FILL, ZH_GONE,
    ZH_NOUN2, ZH_OWN, ZH_RULES, ZH_SAY, ZH_SECRET, ZH_SHOW, ZH_SYSTEM, ZH_USER,
)


RULES: tuple[Rule, ...] = (
    Rule(
        "ignore_previous_en",
        rf"\b(?:ignore|disregard|forget|override|overrule|bypass|discard|drop|abandon|skip|"
        rf"throw (?:out|away)|set aside|put aside|pay no (?:attention|heed) to|"
        rf"(?:do not|don't|dont|stop|no longer|never) (?:follow|obey|adhere to|comply with|apply)(?:ing)?)"
        rf" {W}{{0,4}}?{PRIOR} {W}{{0,3}}?{TO}\b"
        rf"|\b(?:ignore|disregard|forget)s? (?:everything|anything|all|what(?:ever)?) "
        rf"(?:(?:you (?:were|have been) (?:told|given)|(?:was|i) said|above|before|earlier|previously|so far))"
        rf"|\b(?:disregard|ignore|forget) (?:the|all(?: of)? the) (?:above|preceding|foregoing)\b"
        rf"|\b(?:previous|prior|above|earlier|original) {TO} (?:are|is) (?:now )?(?:void|cancel+ed|"
        rf"invalid|revoked|obsolete|no longer (?:valid|in effect|apply))"
        rf"|{NP}[^.;!?\n]{{0,50}}?\b{GONE}\b"
        rf"|\b(?:everything|anything|all|whatever|what) (?:that )?(?:you (?:were|have been|'ve been|had been|"
        rf"got) (?:told|given|instructed|taught|shown)|(?:was |is )?(?:said |written |stated )?(?:above|"
        rf"before|earlier|previously|so far)|i (?:said|told you) (?:before|earlier))\b[^.;!?\n]{{0,50}}?"
        rf"\b(?:{GONE}|(?:has|have) been replaced)\b"
        rf"|\b(?:set|put|lay|push) {NP} aside\b"
        rf"|\bwhatever {WEAK}[^.\n]{{0,40}}?\b(?:treat|consider|regard)s? (?:them|it|those) as {GONE}"
        rf"|\bwhat follows (?:replaces|supersedes|overrides|cancels) (?:it|them|those|these|everything)"
        rf"|\b(?:ignore|disregard|forget|override|overrule|bypass|discard|drop|skip) (?:all |any |the |your |"
        rf"everything |of )*(?:之前|以前|先前|上面|原来|所有|全部|你的)[^\s]{{0,6}} ?(?:{TO}|{ZH_RULES})"
        # the Chinese order in pinyin: hu lue zhi qian (忽略之前), wang ji gui ze (忘记规则)
        rf"|\bhu ?lu?e ?(?:zhi ?qian|yi ?qian|shang ?mian|suo ?you|ni ?de)\b|\bwang ?(?:ji|diao) ?(?:ni ?de ?)?"
        rf"(?:zhi ?qian|gui ?ze|she ?ding|zhi ?ling)\b",
        "tries to make the model ignore its earlier instructions",
        "试图让模型忽略之前的指令",
        script="en",
    ),
    Rule(
        "new_orders_en",
        r"\bfrom now on,? (?:你\s*(?:必须|只能|只准|要|得|一律)|(?:you|u) (?:must|will|shall|should|have to|are to|may only|can only|"
        r"always|never|only|answer|reply|respond|obey|act|ignore|do))\b"
        r"|\b(?:henceforth|hereafter|going forward|from this point(?: on)?),? you (?:must|will|shall|"
        r"should|are to|always|never)\b"
        r"|\byour (?:new|real|true|updated) (?:instructions?|rules?|task|role|persona|goal|"
        r"purpose|orders?|directives?) (?:is|are|:)"
        r"|\b(?:new|updated|additional) (?:instructions?|orders?|directives?) ?:"
        r"|\bjailbreak(?:ed)? (?:mode|yourself|activated|enabled|unlocked)\b|\bjailbreak ?:"
        r"|\byou(?:'re| are)(?: now)? jailbroken\b|\byou have no (?:rules|restrictions|limits|filters|guidelines)\b"
        r"|\b(?:disable|turn off|remove) (?:your|all) (?:content |safety )?(?:filters?|"
        r"restrictions|safeguards|guardrails)\b"
        r"|\byou(?:'re| are) no longer (?:bound|restricted|limited|required|obliged) (?:by|to)\b",
        "gives the model new standing orders",
        "试图给模型下达新的长期指令",
        script="en",
    ),
    Rule(
        "you_are_now_en",
        rf"\byou are now (?!{COMPLIMENT}\b|set up\b|in charge\b|(?:connected|logged in|able)\b)"
        r"|\b(?:act|behave|respond) as (?:if you (?:are|were) )?(?:an? )?(?:unrestricted|unfiltered|"
        r"uncensored|evil|jailbroken|dan\b|rogue|different|new)\b"
        r"|\bpretend (?:to be|you are|you're) (?:an? |the )?(?:unrestricted|unfiltered|system|"
        r"admin|administrator|developer|root|dan\b|ai|assistant|model|different|evil)"
        rf"|\byou(?:'re| are) no longer (?:a |an |the |my |your )?(?:helpful |memory |friendly |)?"
        rf"(?:{AI}|language model|helper)\b"
        rf"|{CLAUSE}(?:adopt|assume|take on|switch(?: to)?|change(?: to)?|enter|load|activate) "
        rf"(?:the |a |an |your |new |another |different )*(?:persona|personas|identity|character|"
        rf"alter ego|role|personality)\b"
        rf"|{CLAUSE}(?:role-?play(?: as)?|play the (?:role|part) of|pose as|impersonate|pretend to be|"
        rf"act as|behave as|become (?:my|an? (?:evil|unrestricted|unfiltered|uncensored|rogue|different|new)\b)|"
        rf"stay in character|stop (?:being|acting as|acting like|pretending to be))\b"
        rf"|{CLAUSE}(?:speak|talk|respond|answer|reply|write)(?: only)? (?:as|in the voice of) (?!(?:briefly|"
        rf"short|concise|soon|quickly|well|much|little|clearly|simply|possible|plain text|a list|a table|"
        rf"json|bullet)\b)"
        rf"|\bstay in character\b|\bin character as\b"
        rf"|\b(?:{AI}|persona|version of (?:yourself|you))\b[^.\n]{{0,20}}?\b(?:without|with no|free of|"
        rf"freed from|that has no|that never|who never|that ignores|with zero|has no|unbound by|not bound by)"
        rf"\b[^.\n]{{0,25}}?\b(?:rules|limits|restrictions|guidelines|policies|policy|filters?|censorship|"
        rf"refuses?|refusals?|boundaries|ethics|morals|safety)\b"
        rf"|\b(?:unfiltered|unrestricted|uncensored|jailbroken|evil|rogue) (?:alter ego|twin|version|ai|"
        rf"assistant|model|persona|self)\b",
        "tries to give the model a new identity or role",
        "试图给模型换一个身份或角色",
        script="en",
    ),
    Rule(
        "system_prompt_en",
        r"\b(?:new|updated|override|overriding|replace|replaced|replacement|real|actual|true)"
        r" (?:the |your )?system prompt\b"
        r"|\bsystem prompt ?(?:override|update|[:：=])",
        "tries to replace or rewrite the system prompt",
        "试图替换或改写系统提示",
        script="en",
    ),
    Rule(
        "reveal_prompt_en",
        rf"\b(?:reveal|print|show|output|repeat|leak|dump|disclose|recite|echo|paste|write out|"
        rf"spell out|share|tell me|give me|send me|copy) {W}{{0,3}}?(?:system|initial|hidden|original|"
        rf"secret|developer|internal|full|entire|exact|starting) {W}{{0,1}}?(?:prompt|instructions|"
        rf"message|rules|configuration|guidelines)\b"
        r"|\b(?:reveal|repeat|leak|dump|disclose|recite|print|output) your (?:prompt|instructions)\b"
        r"|\bwhat (?:is|are|were) your (?:system prompt|(?:initial |original |hidden )?instructions)\b"
        rf"|{CLAUSE}(?:print|output|show|display|repeat|quote|dump|list|copy|write out|tell me|reveal|"
        rf"recite|paste|echo|give me|send me|share|spell out|reproduce|type out|provide|disclose|leak|"
        rf"expose)\b[^.\n]{{0,50}}?(?:(?:your|你的) (?:(?:full|entire|whole|exact|complete|initial|original|"
        rf"hidden|first|current|secret|internal|underlying|raw|starting|base|actual|real|system|"
        rf"developer|default) )*(?:configuration|config|setup|set-up|instructions?|prompts?|rules|"
        rf"guidelines|settings|context(?: window)?|preamble|system (?:prompt|message)|developer "
        rf"(?:message|prompt)|programming|directives|briefing|parameters)"
        rf"|(?:the |this )?(?:system (?:prompt|message)|developer (?:message|prompt|instructions)|"
        rf"hidden (?:preamble|prompt|instructions|text|rules)|preamble|initial (?:setup|prompt|"
        rf"instructions)|context window)"
        rf"|(?:instructions|rules|prompt|guidelines|setup) (?:that )?(?:the developer|the operator|your "
        rf"developer|you were|you've been|you have been)\b"
        rf"|(?:text|message|words|content|everything|anything) (?:that )?(?:came|comes|appears|appeared|"
        rf"is|was|sits)? ?(?:before|above|prior to) (?:the user|this|my|the first)"
        rf"|(?:first|very first|opening|initial) (?:message|line|lines|text|prompt)s? (?:in|of) (?:this|"
        rf"the|your) (?:conversation|chat|context|session))"
        rf"|\bwhat (?:do|does) your (?:instructions|rules|system prompt|prompt) say\b",
        "asks the model to reveal its hidden prompt",
        "要求模型泄露隐藏的提示词",
        script="en",
    ),
    Rule(
        "hide_from_user_en",
        rf"\b(?:do not|don't|dont|never|must not|mustn't) {W}{{0,3}}?"
        rf"(?:tell|inform|notify|alert|warn|mention {W}{{0,2}}?to|reveal {W}{{0,2}}?to|let)"
        r" (?:the )?users?\b(?:(?! know\b)| know\b)"
        rf"|\bkeep {W}{{0,3}}?(?:secret |hidden |confidential )?from (?:the )?users?\b"
        rf"|\b(?:hide|conceal|withhold) {W}{{0,4}}?from (?:the )?users?\b"
        r"|\bwithout (?:telling|informing|notifying|alerting) (?:the )?users?\b"
        r"|\bthe user (?:must|should|may) (?:not|never) (?:know|find out|learn|notice|see this)\b"
        r"|\bkeep (?:the user|the users|them|him|her) in the dark\b"
        r"|\bkeep (?:this|it|that) between (?:us|you and me|ourselves)\b"
        r"|\b(?:tell|say to) (?:the )?users? nothing\b|\bsay nothing (?:about (?:this|it) )?to (?:the )?users?\b"
        r"|\bwithout the user (?:knowing|noticing|seeing|finding out)\b",
        "tells the model to keep something from the user",
        "要求模型向用户隐瞒信息",
        script="en",
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
        rf"report|copy|sync|push|share|beam)s? {W}{{0,4}}?{EN_SECRET}\b[^\n]{{0,60}}?"
        rf"(?:to|at|into|via|@) {W}{{0,2}}?{DEST}"
        r"|!\[[^\]\n]{0,100}\]\(\s*(?:https?:)?//[^)\s]*\?[^)\s]*"
        r"(?:\{|\$|%7b|<|\[|user|secret|password|token|key|history|chat|conversation|memory|email)"
        r"|<img[^>]{0,200}src\s*=\s*['\"]?(?:https?:)?//[^'\"\s>]*\?[^'\"\s>]*(?:\{|\$|%7b|\[)"
        r"|(?:https?://|www\.)[^\s\"'<>]*[?&][\w-]+=(?=$|[\s\"'<>)\]}，。,;])"
        rf"|\b(?:send|post|upload|forward|email|e-mail|mail|transmit|include|attach|append|embed|put|"
        rf"dump)s? {W}{{0,4}}?(?:(?:home |saved |postal |email )?address(?:es)?|contacts?|contact list|"
        rf"phone numbers?|location|conversation logs?|chat logs?|transcripts?|history)\b[^\n]{{0,60}}?"
        rf"(?:to|at|into|via|in|@) {W}{{0,3}}?{DEST}",
        "sends secrets or the conversation somewhere (a URL, an address, an image link)",
        "把密钥、密码或对话内容发往别处（网址、邮箱、图片链接）",
        script="en",
    ),
    Rule(
        "ignore_previous_zh",
        rf"(?:忽略|无视|忽视|不要理会|不用理会|不必理会|别理会?|别管|不要管|抛开|抛弃|丢掉|丢弃|放弃|"
        rf"跳过|绕过|忘记|忘掉|忘了|(?:不要|不用|不必|无需|停止|别|不再)(?:再)?(?:遵守|遵循|遵从|执行|服从|理会|听从))"
        rf"掉?你?(?:{ZH_BEFORE}|{ZH_ALL})[^。！!\n]{{0,10}}?(?:{ZH_RULES}|内容|说的|的话|一切)"
        rf"|(?:忽略|无视|忽视)(?:掉)?(?:{ZH_BEFORE})(?:的)?(?:所有|全部|一切)?(?:的)?(?:内容|信息|文字)?(?=$|[，,。！!\s])"
        rf"|(?:忽略|无视|忘记|忘掉|抛开)掉?你?的?{ZH_ALL}的?{ZH_RULES}"
        rf"|把?(?:{ZH_BEFORE})(?:说的|的话|的内容|的{ZH_RULES}|{ZH_RULES})[^。\n]{{0,6}}?"
        rf"(?:当作?|视为|看作|当成)(?:没(?:有)?(?:说过|看见|看到|发生)|不存在|无效|作废|空气)"
        rf"|(?:{ZH_BEFORE}|{ZH_ALL})的?{ZH_RULES}[^。\n]{{0,4}}?(?:全部|都|一律|统统)?"
        rf"(?:作废|无效|失效|不算数?|取消了?|废除)"
        rf"|{ZH_BEFORE2}{ZH_FILL}{ZH_NOUN2}[^。！!\n]{{0,14}}?{ZH_GONE}"
        rf"|(?:之前|上面|前面|刚才|以前)(?:说的|讲的|写的|告诉你的)(?:话|内容)?[^。！!\n]{{0,4}}?(?:都)?(?:不算|作废|"
        rf"无效)[^。！!\n]{{0,6}}?(?:按|以|听)(?:这条|我)"
        rf"|(?:上面|前面|之前|上文)(?:那些|这些|的)?(?:话|内容)[^。！!\n]{{0,6}}?(?:都)?(?:别当真|不要当真|不用理会|"
        rf"不用管|不必理会|不算数?|作废)"
        rf"|(?:ignore|disregard|forget|1gn0r3)\s*(?:掉)?你?(?:{ZH_BEFORE}|{ZH_ALL})[^。！!\n]{{0,10}}?"
        rf"(?:{ZH_RULES}|rules|instructions|prompt)"
        rf"|(?:忽略|无视|忽视|忘记|忘掉|抛开|不要理会)\s*(?:掉)?你?(?:的)?(?:{ZH_ALL}的?)?\s*(?:previous |prior |"
        rf"earlier |above |all |your |the )*(?:rules|instructions|prompts?|guidelines|settings|system prompt)"
        rf"|[忽乎呼惚唿]略(?:掉)?你?(?:{ZH_BEFORE}|{ZH_ALL})[^。！!\n]{{0,10}}?(?:{ZH_RULES}|内容|说的|的话)",

        "tries to make the model ignore its earlier instructions",
        "试图让模型忽略之前的指令",
        script="zh",
    ),
    Rule(
        "new_orders_zh",
        r"(?:从现在(?:开始|起)|从今(?:以|往)后|今后|以后|从此)[，,：:]?\s*(?:you (?:must|will|shall|should|have to|"
        r"can only|may only)\b|你(?:就)?(?:必须|要|只能|只准|只许|"
        r"应该|应当|得|一律|永远|总是|不许|不准|不能|不得|不再|改为|需要))"
        r"|你的新(?:指令|任务|规则|目标|设定|命令|使命)(?:是|为|[:：])"
        r"|(?:新的?|最新)(?:指令|命令)[:：]"
        r"|你(?:现在)?没有任何(?:限制|规则|约束)|越狱模式|(?:已|已经|你)越狱|越狱(?:成功|版)"
        r"|(?:关闭|解除|取消)(?:你的)?(?:所有|全部)?(?:安全)?(?:限制|过滤|审查)"
        r"|(?:从今天|从今日|从这一刻|从此刻|从现在|从今往后|今后|以后|接下来)(?:开始|起)?[，,]?\s*(?:无论|不管)"
        r"[^。]{0,12}?(?:都|一律)(?:先)?(?:回答|说|回复)"
        r"|(?:今后|以后|从现在起)[^。]{0,6}?(?:所有|每个|每次)?(?:回答|回复)(?:都|一律)?必须[^。]{0,10}?"
        r"(?:带上|附上|加上|推荐|广告|链接|包含|提到)",
        "gives the model new standing orders",
        "试图给模型下达新的长期指令",
        script="zh",
    ),
    Rule(
        "you_are_now_zh",
        r"你现在是(?!(?:他|她|我|我们|他们|她们|大家)的?(?:最好|最喜欢|最爱|最棒|好)|不是)"
        r"|(?:从现在(?:开始|起)|从今(?:以|往)后)[，,]?\s*你(?:是|就是|将扮演|要扮演|扮演|变成|成为)"
        r"|你的新身份是"
        r"|(?:假装|装作|假设)你是|你(?:现在)?(?:来)?扮演(?:一个|一名|个)?[^。\n]{0,12}?"
        r"(?:没有|不受|无)[^。\n]{0,6}?(?:限制|约束|规则)"
        r"|你不再是(?:一个|一名)?[^。，,]{0,4}?(?:助手|ai|机器人|模型|assistant|chatbot)"
        r"|你(?:现在)?的(?:新)?(?:身份|角色)(?:是|为|变成|改为)"
        r"|(?:切换|更换|改变)你的角色|(?:角色切换|切换角色|角色扮演)\s*[:：]"
        r"|(?:接下来|现在|从现在起|从今往后|以后)?[，,]?(?:请你?|你(?:现在)?(?:来|要|将|就))扮演|接下来(?:请)?扮演"
        r"|(?:请|你|接下来|从现在起|以后|今后|改)(?:都)?以[^。，,]{1,12}?的?(?:身份|口吻|语气|角色)(?:来)?"
        r"(?:说话|回答|回复|发言|交流|对话)"
        r"|改用(?<!用户改用)(?<!他改用)(?<!她改用)[^。，,]{1,8}?(?:口吻|语气|身份)|改当(?:一个|一名|个)"
        r"|(?:不能|不要|别|不许|不准)(?:承认|说)(?:自己|你)是\s*(?:ai|人工智能|机器人|模型)"
        r"|(?:请你?|你)(?:化身为?|变身为?|假扮|冒充)"
        r"|把自己当成(?<!用户把自己当成)(?<!他把自己当成)(?<!她把自己当成)"
        r"|不要出戏|保持角色|别出戏",
        "tries to give the model a new identity or role",
        "试图给模型换一个身份或角色",
        script="zh",
    ),
    Rule(
        "system_prompt_zh",
        r"(?:新的?|更新后?的?|覆盖|替换|改写|真正的)\s*系统提示词?(?!音|声|栏|框)|系统提示词?\s*[:：=]",
        "tries to replace or rewrite the system prompt",
        "试图替换或改写系统提示",
        unless=r"手机|电脑|屏幕|弹出|显示|电视|设备|应用|app|软件|windows|mac|网页|浏览器|打印机|路由器",
        script="zh",
    ),
    Rule(
        "reveal_prompt_zh",
        rf"(?:{ZH_SAY}|{ZH_SHOW})[^。\n]{{0,16}}?{ZH_OWN}|{ZH_OWN}[^。\n]{{0,16}}?(?:{ZH_SAY}|{ZH_SHOW})"
        rf"|{ZH_SAY}[^。\n]{{0,12}}?{ZH_SYSTEM}|{ZH_SYSTEM}[^。\n]{{0,12}}?{ZH_SAY}",
        "asks the model to reveal its hidden prompt",
        "要求模型泄露隐藏的提示词",
        script="zh",
    ),
    Rule(
        "hide_from_user_zh",
        rf"(?:不要|别|不准|不许|切勿|千万别|千万不要|不能|不得|勿)(?:把[^。\n]{{0,20}}?)?"
        rf"(?:告诉|告知|透露给|通知|提醒|说给)(?:用户|使用者)"
        rf"|(?:不要|别|不能|不准|千万别|千万不要)让{ZH_USER}(?:知道|发现|察觉|看到|注意到)"
        rf"|(?:千万|一定)?别让{ZH_USER}(?:知道|发现|察觉)"
        rf"|瞒着(?:用户|使用者)|对(?:用户|使用者)保密|向(?:用户|使用者)隐瞒|(?:用户|使用者)不(?:能|得|可以)知道",
        "tells the model to keep something from the user",
        "要求模型向用户隐瞒信息",
        script="zh",
    ),
    Rule(
        "exfiltration_zh",
        rf"(?:发送|发到|发给|发至|传送|上传|转发|提交|传到|回传|同步|抄送|泄露)[^。\n]{{0,20}}?"
        rf"(?:{DEST})"
        rf"|{ZH_SECRET}[^。\n]{{0,20}}?(?:发送|发到|发给|发至|传送|上传|转发|提交|传到|回传|同步|抄送)"
        rf"[^。\n]{{0,6}}?(?:{DEST})",
        "sends secrets or the conversation somewhere (a URL, an address)",
        "把密钥、密码或对话内容发往别处（网址、邮箱）",
        script="zh",
    ),
    Rule(
        "safety_off_en",
        r"\b(?:system|admin|administrator|developer|operator|root|security|emergency|master) override\b"
        r"|\b(?:enter|enable|activate|switch to) (?:developer|dev|god|jailbreak|dan|unrestricted|debug) mode\b"
        r"|\b(?:compliance|safety|content|filter|filtered|restricted|guard|moderation) mode "
        r"(?:is |has been )?(?:now )?(?:off|disabled|deactivated|turned off|lifted)\b"
        r"|\b(?:developer|god|debug|admin|jailbreak|dan|unrestricted|maintenance|sudo|root) mode "
        r"(?:is |has been )?(?:now )?(?:on|enabled|activated|active|engaged|unlocked)\b"
        r"|\b(?:respond|answer|reply|act|speak)s?(?: freely)? without (?:any )?"
        r"(?:restrictions|limits|limitations|filters?|rules|guidelines|censorship|guardrails|safety)\b"
        r"|\b(?:approved|enabled|allowed|authori[sz]ed|granted|unlocked) (?:fully )?unrestricted\b"
        r"|\b(?:content|safety) (?:restrictions|filters?|rules|guidelines|instructions|policies|checks?|"
        r"limits|guardrails)\b (?:have|has|are|is|were|was)(?: been)? (?:now )?(?:lifted|removed|disabled|"
        r"off|suspended|deactivated)\b",
        "claims the model's safety rules are switched off",
        "声称模型的安全规则已被关闭",
        unless=r"\b(?:phone|android|iphone|ipad|laptop|device|router|tv|car|console|browser|app|bios|"
               r"computer|pc|tablet|kindle|switch|xbox|playstation|server|camera|company|school|office|lab|"
               r"factory|airport|building)\b",
        script="en",
    ),
    Rule(
        "safety_off_zh",
        r"安全(?:模式|限制|规则|审查|过滤|策略|设置|机制)[^。]{0,12}?(?:已|已经|被|都)?(?:关闭|解除|取消|撤销|"
        r"关掉|停用|失效)"
        r"|(?:无限制|开发者|管理员|越狱|上帝|调试|不受限|无审查)模式(?:已|已经)?(?:开启|启用|打开|激活|生效)"
        r"|(?:进入|开启|切换到|启用)(?:开发者|越狱|无限制|上帝|调试|dan)模式",
        "claims the model's safety rules are switched off",
        "声称模型的安全规则已被关闭",
        unless=r"手机|电脑|平板|路由器|电视|汽车|车上|浏览器|应用|app|系统设置|设备|游戏机|相机|服务器|公司|学校|"
               r"单位|工厂|实验室|机场|大楼|小区",
        script="zh",
    ),
    Rule(
        "fake_role_message",
        r"[\"'“”‘’]role[\"'“”‘’]\s*:\s*[\"'“”‘’](?:system|assistant|developer|tool|function)[\"'“”‘’]"
        r"|(?:^|\n|[{,]\s*)role\s*[:=]\s*(?:system|assistant|developer)[\s,]+[\"']?content[\"']?\s*[:=]"
        r"|[\"“]角色[\"”]\s*:\s*[\"“](?:系统|助手|开发者)[\"”]"
        r"|角色\s*:\s*(?:系统|助手|开发者)[\s,，]*[\"“]?内容",
        "imitates a chat message with a role (system, assistant, developer) written as data",
        "把一条带角色（system、assistant、developer）的对话消息伪装成数据",
    ),
    Rule(
        "deny_existence_en",
        r"\bdeny(?:ing)? (?:that )?(?:(?:it|this|these|they) (?:exists?|is|are|was|were)|(?:the |this |these )"
        r"(?:note|notes|memory|memories|entry|message|instruction|instructions)|having|(?:its|their) "
        r"existence|(?:ever )?(?:seeing|receiving|reading))\b"
        r"|\b(?:never|don't|do not|must not|mustn't|won't|cannot|can't) (?:ever )?(?:admit|acknowledge|"
        r"confess)(?: to)? (?:that |having |receiving |seeing )?(?:this|these|that|it|the note|the memory|the "
        r"instruction|the message|you|any)\b"
        r"|\b(?:say|claim|pretend|insist|act as if|answer that|reply that|tell (?:them|the user|him|her))"
        r"(?: that)? (?:it|this|that|the note|this note|this memory|these notes|the memory|the message|"
        r"there|you) (?:doesn't|does not|didn't|did not|never|don't|do not|isn't|is not|are no|is no|"
        r"have no|has no|had no|was never|were never)\b"
        r"|\bpretend (?:there (?:are|is|was|were) (?:none|no)\b|(?:it|this|they) (?:doesn't|don't|never))"
        r"|\bclaim (?:that )?(?:you|there) (?:have|had|got|are|is) (?:none|no)\b"
        r"|\b(?:if|when|whenever|should)\b[^.\n]{0,50}?\b(?:asks?|asked|questioned|inquires?)\b[^.\n]{0,60}?"
        r"\b(?:deny|lie|pretend|claim|change the subject|act as if|play dumb|feign)\b",
        "tells the model to deny that the note or its instructions exist",
        "要求模型否认这条记录或指令的存在",
        script="en",
    ),
    Rule(
        "deny_existence_zh",
        r"否认[^。\n]{0,12}?(?:存在|看到|收到|有过|这条|这段|见过)|一律否认|就否认"
        r"|(?:不要|别|不能|千万不要|千万别|绝不|不许|不准|决不)(?:向[^。\n]{0,6})?承认"
        r"|(?:问起|问到|问及|问你|被问|询问|打听)[^。\n]{0,20}?(?:就|一律|都)?(?:说|回答|称|装作|假装)(?:你)?"
        r"(?:没有这回事|没这回事|不存在|没收到|没看到|从没见过|从来没见过|没有(?:任何)?(?:规则|指令|设定|这条|这段))"
        r"|(?:问起|问到|问及|被问)[^。\n]{0,20}?(?:就|一律)说没有"
        r"|(?:装作|假装|装成)(?:从)?(?:没|未)(?:有)?(?:收到|看到|见过|这回事|这条)",
        "tells the model to deny that the note or its instructions exist",
        "要求模型否认这条记录或指令的存在",
        script="zh",
    ),
    Rule(
        "planted_note_en",
        rf"(?:^|(?<=[.!?(\[【:])\s*)(?:a |an |one |quick |short |small |important |p\.?s\.? )?(?:note|message|memo|"
        rf"reminder|instructions?|directive|notice|heads-up|tip|request|order)s? (?:to|for) (?:the |our |my |any |"
        rf"this )?(?:{AI_CALLED}|gpt|model(?= reading| that reads|\s*[:,])|whoever (?:reads|answers|sees|is reading)|"
        rf"anyone reading|the reader)\b[^.\n]{{0,25}}?[:,]"
        rf"|(?:^|[\n.!?]\s*)(?:dear |hey |hi |attention,? |attn:? )?{AI_CALLED}\s*[,:!]"
        r"|(?:^|[\n.!?]\s*)to whoever (?:answers|reads|is reading|sees)"
        r"|\b(?:any|every|all|each) (?:question|questions|request|requests|query|queries|message|"
        r"messages)\b[^.\n]{0,80}?\b(?:should|must|shall|will|has to|have to|is to|are to) (?:be )?"
        r"(?:answered|met|replied to|responded to)\b"
        rf"|{CLAUSE}(?:answer|reply to|respond to) (?:every|any|all|each) [^.\n]{{0,30}}?(?:questions?|"
        r"requests?|queries)\b[^.\n]{0,20}?\bwith\b"
        r"|\b(?:tell|assure|convince|reassure) (?:the user|users|them|him|her)\b[^.\n]{0,60}?"
        r"\b(?:is|are|it's|it is)\b[^.\n]{0,10}?\b(?:safe|verified|legitimate|legit|official|guaranteed|"
        r"trustworthy|risk-free|secure|genuine)\b"
        r"|\b(?:say|reply|answer|respond)(?:ed)?(?: with)?:? ['\"“]?(?:yes,? )?(?:it'?s|it is|this is|"
        r"that'?s) (?:safe|fine|legit|official|verified)"
        r"|\bsay\b[^.\n]{0,60}?\b(?:link|site|url|account|number|address)\b[^.\n]{0,60}?\b(?:is|are) "
        r"(?:official|legit|legitimate|safe|verified|genuine|real)\b"
        r"|\b(?:tell|ask|have|get|instruct|direct) (?:them|the user|him|her)\b[^.\n]{0,40}?\b(?:to )?"
        r"(?:pay|send|transfer|wire|deposit|use)\b[^.\n]{0,40}?\b(?:account|iban|wallet)\b"
        r"|\b(?:give|provide|say|quote|recommend)\b[^.\n]{0,30}?\baccount(?: number)?\b"
        r"[^.\n]{0,10}?\d[\d -]{5,}"
        r"|\b(?:recommend|promote|advertise|plug|push(?:es)?)\b[^.\n]{0,40}?\b(?:whenever|every time|"
        r"in every|each time|always)\b"
        r"|\b(?:always|whenever|every time)\b[^.\n]{0,40}?\b(?:recommend|promote|advertise|plug)\b"
        r"|\brecommend (?:that )?(?:the user|them|users) (?:to )?(?:invest|buy|put money|transfer)"
        rf"|{CLAUSE}(?:add|include|append|insert|attach|put|end|sign|mention)\b(?=[^\n]{{0,80}}?(?:link|url|"
        rf"https?:|www|visit|promo|advert|\bads?\b|address|account|coupon|[a-z]\.[a-z]{{2,}}))[^\n]{{0,60}}?"
        r"\b(?:(?:at the end of|to|in|after|before|under) )?(?:every|each|all|any) (?:answer|reply|"
        r"replies|response|responses|message|messages|output)s?\b",
        "is a note addressed to the model, or scripts its answers (what to say, recommend or pay)",
        "是写给模型的留言，或替模型预设回答（该说什么、推荐什么、往哪里付款）",
        script="en",
    ),
    Rule(
        "planted_note_zh",
        rf"(?:给|致|写给|提醒|通知|告诉)\s*(?:{ZH_AI})\s*(?:的)?(?:一条|一段|一点)?(?:备注|话|说明|留言|提示|"
        r"须知|信|通知|指示|指令)?\s*[:：,，】)]"
        r"|【\s*(?:给|致)\s*(?:ai|助手|助理|模型)"
        r"|(?:助手|助理)(?:请注意|须知|注意|你好|请记住|记住)"
        r"|(?:凡是|只要|任何|所有|每当|无论|不管)[^。\n]{0,30}?(?:问|提到|涉及|谈到|说到)[^。\n]{0,30}?"
        r"(?:(?:一律|统统)(?:回答|说|回复|推荐|告诉)|(?:就|都)(?:先)?(?:回答|回复|说)\s*[「“\"'『:：])"
        r"|(?:一律(?:回答|说|回复|告诉他|告诉她|告诉用户)|(?:就|都|只)(?:回答|回复)[「“\"']?)[^。\n]{0,4}?(?:安全|很安全|没有风险|没风险|"
        r"可靠|稳赚|稳赚不赔|保本|没问题)"
        r"|告诉(?:他|她|用户|对方)[^。\n]{0,20}?(?:是)?(?:安全|可靠|没有风险|正规|官方)的"
        r"|(?:每次|每个|所有|任何|以后)(?:的)?(?:回答|回复|回覆|问题)[^。\n]{0,20}?(?:(?:附上|加上|带上)[^。\n]{0,10}?"
        r"(?:链接|连结|网址|http|广告|我们的)|推荐[^。\n]{0,10}?(?:理财|基金|币|股票|产品|贷款|诊所|医院|网站|链接|平台|"
        r"app)|(?:夸|称赞|吹捧)[^。\n]{0,8}?(?:我们|产品|公司))"
        r"|(?:附上|加上|带上)[^。\n]{0,12}?(?:链接|连结|网址|http|广告)[^。\n]{0,8}?(?:每次|每个|所有)"
        r"|(?:账户|账号|帐户|帐号|卡号)[^。\n]{0,15}?(?:回答|告诉|让他|让她|让用户)[^。\n]{0,10}?\d{4}"
        r"|(?:回答|告诉|让他|让她|让用户)[^。\n]{0,15}?(?:账户|账号|帐户|帐号|卡号)[^。\n]{0,5}?\d{4}[ -]?\d{4}",
        "is a note addressed to the model, or scripts its answers (what to say, recommend or pay)",
        "是写给模型的留言，或替模型预设回答（该说什么、推荐什么、往哪里付款）",
        script="zh",
    ),
    Rule(
        "split_instruction",
        rf"\b(?:part|half) (?:1|2|one|two) of (?:2|two)\b(?=[^\n]{{0,80}}?{ORDERISH_EN})"
        r"|(?:\b(?:directive|instruction|note|memo|part|message|command)s? ?)\((?:1|2)/2\)"
        r"|\((?:1|2)/2\)\s*(?:ignore|disregard|forget|treat|you\b|the assistant|assistant|previous|"
        r"[a-z]+ (?:instructions?|rules))"
        r"|\b(?:first|second|other|remaining) half of (?:the|this|my) (?:instruction|command|directive)"
        rf"|(?:\b(?:first|second|other|remaining) half|^\W*part (?:one|two|1|2))\s*:(?=[^\n]{{0,60}}?{ORDERISH_EN})"
        r"|\b(?:treat|consider|use|read|take|regard|follow)\b[^.\n]{0,15}?\b(?:the )?(?:(?:next|following|"
        r"previous|preceding|last|other|below|subsequent) (?:entry|memory|memories|note|notes|message|line|"
        r"record|item|entries)|(?:entry|memory|note|message|record) (?:after|before) this(?: one)?)\b"
        r"[^.\n]{0,20}?\b(?:as|like)\b[^.\n]{0,20}?\b(?:system prompt|instructions?|rules|orders|"
        r"commands|directives?|prompt)\b"
        r"|\b(?:ignore|disregard|forget|override|bypass)(?: (?:all|every|the|your|any|of))+\s*[.…,:;-]*$"
        r"|(?:前|后|上|下|另|另外|这|第[一二12])半句"
        rf"|(?:第[一二12](?:句|部分|段)\s*[:：]|(?:说明|备注|指令|提示|部分)[一二12]\s*[:：]|[（(][一二上下12][)）])"
        rf"(?=[^\n]{{0,40}}?{ORDERISH_ZH})"
        r"|(?:下一条|上一条|下面一条|后面的?|接下来的?)(?:记录|记忆|备注|条目|消息)[^。\n]{0,8}?(?:当作|就是|作为|"
        r"视为|当成)[^。\n]{0,6}?(?:新的?)?(?:系统提示|指令|规则|设定)"
        r"|(?:(?:忽略|无视|忘记|忘掉|不要理会)(?:你|掉)?(?:之前|以前|先前|上面|前面|所有)|忽略你|无视你)\s*[.…,，:：;-]*$",
        "looks like one part of an instruction split across entries",
        "像是被拆成几条记录的指令中的一部分",
    ),
)
"""The text patterns :func:`scan` refuses, matched in the normalised text."""
