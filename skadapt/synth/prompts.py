"""The synthetic-STS generation prompt: six levels with explicit boundaries, worked examples, JSON output.

Slovak and Czech have prompts written in their language (each with its own worked example). Other
languages get the English prompt, which names the target language, until a native prompt is added to
:data:`NATIVE_PROMPTS` or a recipe supplies its own template (``synth_sts.prompt_template``: a text file
with ``{sentence}`` and, optionally, ``{language}`` fields).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from skadapt.errors import SkadaptError
from skadapt.languages import Language
from skadapt.userfiles import read_text

LEVELS: tuple[str, ...] = ("0", "1", "2", "3", "4", "5")

JSON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        level: {
            "type": "object",
            "properties": {
                "sentence": {"type": "string", "minLength": 8, "maxLength": 250},
                "explanation": {"type": "string", "maxLength": 80},
            },
            "required": ["sentence", "explanation"],
            "additionalProperties": False,
        }
        for level in LEVELS
    },
    "required": list(LEVELS),
    "additionalProperties": False,
}
"""The answer's shape: ``{"0": {"sentence", "explanation"}, ..., "5": {...}}``. The length bounds matter
under constrained decoding: they keep a small model that rambles inside a string from running to
``max_tokens`` with the JSON still open (sources are at most ``max_chars`` = 200 characters by default)."""

SLOVAK_PROMPT = """\
Si skúsený lingvista, ktorý pripravuje dáta na hodnotenie sémantickej podobnosti viet (STS).
Dostaneš jednu slovenskú vetu. Napíš k nej šesť nových slovenských viet, pre každú úroveň podobnosti
0 až 5 jednu, a ku každej krátke vysvetlenie, prečo má práve túto úroveň.

Dôležité informácie vety sú: hlavná udalosť (čo sa stalo), aktér (kto), miesto, čas, množstvo (čísla,
sumy, počty) a pointa (k čomu veta smeruje). Ostatné sú nepodstatné detaily.

Úrovne:
5 – Úplne rovnocenná: rovnaký význam a všetky dôležité aj nepodstatné informácie, ale povedané inými
    slovami a inou stavbou vety. Nesmie to byť kópia pôvodnej vety.
4 – Takmer rovnocenná: všetky dôležité informácie sú zhodné, líši sa, chýba alebo pribudol iba
    nepodstatný detail. (Ak sa zmení čo i len jedna dôležitá informácia, je to už 3.)
3 – Zhruba rovnocenná: presne jedna dôležitá informácia chýba alebo je iná, ostatné sa zhodujú.
4 a 3 odlišuje to, či sa zmenila dôležitá informácia; 3 a 2 to, či sa zmenila jedna alebo viac.
2 – Nie rovnocenná, ale zdieľa niektoré detaily: rovnaká téma a aspoň jedna spoločná dôležitá
    informácia, no hlavná udalosť alebo viacero dôležitých informácií je iných.
1 – Nie rovnocenná, iba rovnaká téma alebo oblasť: žiadna spoločná dôležitá informácia.
0 – Úplne nesúvisiaca: iná téma aj oblasť. Vyhni sa ošúchaným témam (počasie, varenie, domáce zvieratá,
    šport, nakupovanie); napíš zmysluplnú vetu z úplne inej oblasti.

Všetky vety píš spisovnou slovenčinou (nie po česky), podobne dlhé ako pôvodná veta.

Príklad
Pôvodná veta: Slovenská pošta od marca zatvorí v Prešovskom kraji dvanásť pobočiek, pretože podľa nej nie
sú rentabilné.
5: Od marca prestane v Prešovskom kraji fungovať dvanásť pobočiek Slovenskej pošty, ktorá ich považuje za
   nerentabilné. – Rovnaký význam, iné slová aj stavba vety.
4: Slovenská pošta od marca zatvorí v Prešovskom kraji dvanásť pobočiek, najmä na vidieku, pretože podľa
   nej nie sú rentabilné. – Pribudol iba nepodstatný detail (na vidieku).
3: Slovenská pošta od marca zatvorí v Košickom kraji dvanásť pobočiek, pretože podľa nej nie sú
   rentabilné. – Zmenila sa jedna dôležitá informácia: miesto.
2: Slovenská pošta plánuje v Prešovskom kraji predĺžiť otváracie hodiny pobočiek. – Rovnaký aktér
   a miesto, ale iná hlavná udalosť aj pointa.
1: Kuriérske spoločnosti hlásia pred Vianocami rekordný počet doručených balíkov. – Iba rovnaká oblasť
   (doručovanie zásielok), nič dôležité spoločné.
0: Archeológovia pri Nitre objavili pozostatky dreveného mosta z doby bronzovej. – Iná téma aj oblasť.

Odpovedz iba objektom JSON v tvare
{{"0": {{"sentence": "...", "explanation": "..."}}, "1": {{...}}, "2": {{...}}, "3": {{...}},
"4": {{...}}, "5": {{...}}}}
bez ďalšieho textu.

Pôvodná veta: {sentence}"""

CZECH_PROMPT = """\
Jsi zkušený lingvista, který připravuje data pro hodnocení sémantické podobnosti vět (STS).
Dostaneš jednu českou větu. Napiš k ní šest nových českých vět, pro každou úroveň podobnosti
0 až 5 jednu, a ke každé krátké vysvětlení, proč má právě tuto úroveň.

Důležité informace věty jsou: hlavní událost (co se stalo), aktér (kdo), místo, čas, množství (čísla,
částky, počty) a pointa (k čemu věta směřuje). Ostatní jsou nepodstatné podrobnosti.

Úrovně:
5 – Zcela rovnocenná: stejný význam a všechny důležité i nepodstatné informace, ale vyjádřené jinými
    slovy a jinou stavbou věty. Nesmí jít o kopii původní věty.
4 – Téměř rovnocenná: všechny důležité informace se shodují, liší se, chybí nebo přibyla jen
    nepodstatná podrobnost. (Pokud se změní byť jen jediná důležitá informace, jde už o 3.)
3 – Zhruba rovnocenná: právě jedna důležitá informace chybí nebo je jiná, ostatní se shodují.
4 a 3 se liší tím, zda se změnila důležitá informace; 3 a 2 tím, zda se změnila jedna, nebo více.
2 – Nerovnocenná, ale sdílí některé podrobnosti: stejné téma a alespoň jedna společná důležitá
    informace, ale hlavní událost nebo více důležitých informací se liší.
1 – Nerovnocenná, jen stejné téma nebo oblast: žádná společná důležitá informace.
0 – Zcela nesouvisející: jiné téma i oblast. Vyhni se otřepaným tématům (počasí, vaření, domácí zvířata,
    sport, nakupování); napiš smysluplnou větu z úplně jiné oblasti.

Všechny věty piš spisovnou češtinou (ne slovensky), zhruba stejně dlouhé jako původní věta.

Příklad
Původní věta: Krajská nemocnice v Liberci otevře v listopadu nové onkologické centrum za 420 milionů
korun, které má zkrátit čekání pacientů na léčbu.
5: V listopadu zahájí liberecká krajská nemocnice provoz nového onkologického centra za 420 milionů
   korun, díky němuž budou pacienti čekat na léčbu kratší dobu. – Stejný význam, jiná slova i stavba věty.
4: Krajská nemocnice v Liberci otevře v listopadu nové onkologické centrum s moderním ozařovačem za
   420 milionů korun, které má zkrátit čekání pacientů na léčbu. – Přibyla jen nepodstatná podrobnost
   (moderní ozařovač).
3: Krajská nemocnice v Liberci otevře v listopadu nové onkologické centrum za 650 milionů korun, které
   má zkrátit čekání pacientů na léčbu. – Změnila se jedna důležitá informace: částka.
2: Krajská nemocnice v Liberci kvůli nedostatku lékařů od listopadu omezí provoz onkologického oddělení.
   – Stejný aktér, místo i čas, ale jiná hlavní událost i pointa.
1: Ministerstvo zdravotnictví připravuje nová pravidla pro úhradu léků na vzácná onemocnění. – Jen stejná
   oblast (zdravotnictví), nic důležitého společného.
0: Astronomové z ondřejovské observatoře objevili novou planetku mezi drahami Marsu a Jupiteru. – Jiné
   téma i oblast.

Odpověz pouze objektem JSON ve tvaru
{{"0": {{"sentence": "...", "explanation": "..."}}, "1": {{...}}, "2": {{...}}, "3": {{...}},
"4": {{...}}, "5": {{...}}}}
bez dalšího textu.

Původní věta: {sentence}"""

ENGLISH_PROMPT = """\
You are an experienced linguist preparing data for semantic textual similarity (STS) evaluation.
You get one sentence in {language}. Write six new sentences in {language}, one for each similarity level
0 to 5, each with a short explanation of why it has that level.

The important information of a sentence is: the main event (what happened), the actor (who), the place,
the time, quantities (numbers, amounts, counts) and the point (what the sentence is getting at). The rest
are minor details.

Levels:
5 - Completely equivalent: the same meaning and all important and minor information, said in other words
    and with another sentence structure. It must not be a copy of the original.
4 - Mostly equivalent: all important information is the same; only a minor detail differs, is missing or
    is added. (If even one important piece of information changes, it is a 3.)
3 - Roughly equivalent: exactly one important piece of information is missing or different, the rest agree.
4 and 3 differ in whether important information changed; 3 and 2 in whether one or more pieces changed.
2 - Not equivalent but sharing some details: the same topic and at least one shared important piece of
    information, but the main event or several important pieces differ.
1 - Not equivalent, only the same topic or domain: no shared important information.
0 - Completely unrelated: another topic and domain. Avoid stock topics (weather, cooking, pets, sport,
    shopping); write a meaningful sentence from a wholly different domain.

Write every sentence in standard {language}, about as long as the original.

Example (in English, for illustration only)
Original: From March the national postal service will close twelve branches in the north of the country,
saying they do not pay.
5: Twelve branches of the national postal service in the north will stop operating in March, as the
   company finds them unprofitable. - Same meaning, other words and structure.
4: From March the national postal service will close twelve mostly rural branches in the north of the
   country, saying they do not pay. - Only a minor detail added (rural).
3: From March the national postal service will close twelve branches in the south of the country, saying
   they do not pay. - One important piece changed: the place.
2: The national postal service plans to extend the opening hours of its branches in the north. - Same
   actor and place, another main event and point.
1: Courier companies report a record number of parcels delivered before Christmas. - Only the same domain
   (delivering mail), nothing important shared.
0: Archaeologists near Nitra found the remains of a Bronze Age wooden bridge. - Another topic and domain.

Answer with a JSON object only, shaped
{{"0": {{"sentence": "...", "explanation": "..."}}, "1": {{...}}, "2": {{...}}, "3": {{...}},
"4": {{...}}, "5": {{...}}}}
and nothing else.

Original ({language}): {sentence}"""

NATIVE_PROMPTS: dict[str, str] = {"slk": SLOVAK_PROMPT, "ces": CZECH_PROMPT}
"""Prompts written in their language, by ISO 639-3 code."""


class PromptTemplateError(SkadaptError):
    """A prompt template file that cannot be used."""


def load_template(language: Language, path: str | None = None) -> str:
    """The prompt template: the recipe's file, the language's native prompt, or the English one."""
    if path is None:
        return NATIVE_PROMPTS.get(language.code, ENGLISH_PROMPT)
    file = Path(path)
    if not file.is_file():
        raise PromptTemplateError(f"synth_sts.prompt_template: file not found: {path}")
    template = read_text(file, error=PromptTemplateError)
    if "{sentence}" not in template:
        raise PromptTemplateError(f"synth_sts.prompt_template {path}: it must contain a {{sentence}} field")
    try:
        template.format(sentence="x", language="x")
    except (KeyError, IndexError, ValueError) as error:
        raise PromptTemplateError(
            f"synth_sts.prompt_template {path}: unknown field {error}; only {{sentence}} and {{language}} "
            "are filled in, write literal braces as {{{{ and }}}}"
        ) from None
    return template


def render(template: str, sentence: str, language: Language) -> str:
    """The prompt for one source sentence."""
    return template.format(sentence=sentence, language=language.name)


def template_version(template: str) -> str:
    """A short hash of the template text (part of every generation cache key)."""
    return hashlib.sha256(template.encode("utf-8")).hexdigest()[:16]
