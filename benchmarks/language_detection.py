"""Language detection on short text: py3langid (what ragwright uses) against lingua, if installed.

95 short queries and sentences in eleven languages (English, German, French, Spanish, Italian,
Portuguese, Dutch, Russian, Chinese, Japanese, Korean), the kind of text a search box receives.
For each detector: how many it labels right, and the time per text. Short text is the hard case:
a chunk of a few hundred words is easy for any detector, a three-word query is not.

lingua (``pip install lingua-language-detector``, 96 MB) is an optional peer, measured in its fast
("low accuracy") and its accurate mode when it is installed.

Usage::

    python benchmarks/language_detection.py
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
try:
    import ragwright  # noqa: F401
except ImportError:  # source checkout without an install
    sys.path.insert(0, str(ROOT / "src"))

SAMPLES: dict[str, list[str]] = {
    "en": ["cobalt shipment number", "how do I reset my password", "effects of vitamin D on bone density",
           "what is the refund policy for damaged goods", "boundary layer flow over a flat plate",
           "the children were playing in the garden", "annual report revenue growth",
           "error when connecting to the database", "invoice overdue reminder", "best practices for code review"],
    "de": ["Rückerstattung für beschädigte Waren", "wie setze ich mein Passwort zurück",
           "Auswirkungen von Vitamin D auf die Knochendichte", "die Kinder spielten im Garten",
           "Jahresbericht Umsatzwachstum", "Fehler bei der Verbindung zur Datenbank", "Mahnung überfällige Rechnung",
           "Grenzschichtströmung über einer ebenen Platte", "wann beginnt die Kündigungsfrist",
           "Häuser mit großen Fenstern"],
    "fr": ["remboursement des marchandises endommagées", "comment réinitialiser mon mot de passe",
           "effets de la vitamine D sur la densité osseuse", "les enfants jouaient dans le jardin",
           "croissance du chiffre d'affaires annuel", "erreur de connexion à la base de données",
           "rappel de facture impayée", "écoulement de couche limite sur une plaque plane",
           "quand commence le préavis", "maisons avec de grandes fenêtres"],
    "es": ["reembolso por productos dañados", "cómo restablezco mi contraseña",
           "efectos de la vitamina D en la densidad ósea", "los niños jugaban en el jardín",
           "crecimiento de los ingresos anuales", "error al conectar con la base de datos",
           "recordatorio de factura vencida", "flujo de capa límite sobre una placa plana",
           "cuándo empieza el plazo de preaviso", "casas con ventanas grandes"],
    "it": ["rimborso per merce danneggiata", "come reimposto la mia password",
           "effetti della vitamina D sulla densità ossea", "i bambini giocavano nel giardino",
           "crescita del fatturato annuale", "errore di connessione al database", "sollecito fattura scaduta",
           "quando inizia il periodo di preavviso", "case con grandi finestre",
           "le migliori pratiche per la revisione"],
    "pt": ["reembolso de mercadorias danificadas", "como redefinir minha senha",
           "efeitos da vitamina D na densidade óssea", "as crianças brincavam no jardim",
           "crescimento da receita anual", "erro ao conectar ao banco de dados", "lembrete de fatura vencida",
           "quando começa o aviso prévio", "casas com janelas grandes", "melhores práticas para revisão de código"],
    "nl": ["terugbetaling voor beschadigde goederen", "hoe reset ik mijn wachtwoord",
           "effecten van vitamine D op botdichtheid", "de kinderen speelden in de tuin", "groei van de jaaromzet",
           "fout bij verbinding met de database", "herinnering achterstallige factuur",
           "wanneer begint de opzegtermijn", "huizen met grote ramen", "beste werkwijzen voor codebeoordeling"],
    "ru": ["возврат средств за поврежденный товар", "как сбросить пароль", "влияние витамина D на плотность костей",
           "дети играли в саду", "рост годовой выручки", "ошибка подключения к базе данных",
           "напоминание о просроченном счете", "когда начинается срок уведомления", "дома с большими окнами",
           "лучшие практики код-ревью"],
    "zh": ["损坏商品的退款", "如何重置我的密码", "维生素D对骨密度的影响", "孩子们在花园里玩耍", "年度收入增长"],
    "ja": ["破損した商品の返金", "パスワードをリセットする方法", "ビタミンDの骨密度への影響",
           "子供たちは庭で遊んでいた", "年間売上の成長"],
    "ko": ["손상된 상품에 대한 환불", "비밀번호를 재설정하는 방법", "비타민 D가 골밀도에 미치는 영향",
           "아이들이 정원에서 놀고 있었다", "연간 매출 성장"],
}  # fmt: skip


def measure(name: str, detect: Callable[[str], str | None]) -> tuple[str, int, int, float, list[str]]:
    items = [(lang, text) for lang, texts in SAMPLES.items() for text in texts]
    detect(items[0][1])  # load the model
    start = time.perf_counter()
    got = [detect(text) for _, text in items]
    seconds = time.perf_counter() - start
    wrong = [f"{text!r}: {g} (not {lang})" for (lang, text), g in zip(items, got, strict=True) if g != lang]
    return name, len(items) - len(wrong), len(items), seconds / len(items) * 1000, wrong


def main() -> int:
    from ragwright.index.language import language_scores

    rows = [measure("py3langid (ragwright)", lambda t: language_scores(t)[0])]
    try:
        from lingua import LanguageDetectorBuilder  # type: ignore[import-not-found]
    except ImportError:
        print("lingua is not installed: pip install lingua-language-detector to measure it beside")
    else:
        for mode, builder in (
            ("lingua, fast mode", LanguageDetectorBuilder.from_all_languages().with_low_accuracy_mode()),
            ("lingua, accurate mode", LanguageDetectorBuilder.from_all_languages()),
        ):
            detector = builder.build()

            def detect(text: str, d: object = detector) -> str | None:
                found = d.detect_language_of(text)  # type: ignore[attr-defined]
                return None if found is None else str(found.iso_code_639_1.name).lower()

            rows.append(measure(mode, detect))
    print(f"{'detector':24s} {'right':>8s} {'ms/text':>8s}")
    for name, right, total, ms, _ in rows:
        print(f"{name:24s} {right:>4d}/{total:<3d} {ms:8.3f}")
    for name, *_, wrong in rows:
        for line in wrong:
            print(f"  {name}: {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
