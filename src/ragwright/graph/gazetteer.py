"""Small typed word lists for the rule extractor (no model, no download): they type spans the
capitalisation rules found and keep function words out; they are not what finds entities."""

from __future__ import annotations

from typing import Final


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


ORG_WORDS: Final = _words(
    """
    inc ltd llc plc corp corporation company co group holdings bank university college institute school
    foundation association agency council committee commission ministry department party club league
    federation union society press records studios airlines airways motors laboratories labs systems
    technologies networks partners fund trust board court army navy church hospital museum orchestra band team
    fc gmbh ag
    """
)

LOC_WORDS: Final = _words(
    """
    river lake mountain mountains mount mt island islands bay sea ocean valley county province state city town
    village street avenue road park bridge airport station district region peninsula desert forest canyon
    coast
    """
)

EVENT_WORDS: Final = _words(
    """
    war battle festival championship cup olympics election summit conference
    """
)

GPE: Final = _words(
    """
    afghanistan albania algeria argentina armenia australia austria belgium bolivia brazil bulgaria cambodia
    canada chile china colombia croatia cuba cyprus czechia denmark ecuador egypt england estonia ethiopia
    europe africa asia america finland france georgia germany ghana greece hungary iceland india indonesia
    iran iraq ireland israel italy jamaica japan jordan kenya korea latvia lebanon libya lithuania luxembourg
    malaysia mexico mongolia morocco nepal netherlands nigeria norway pakistan peru philippines poland
    portugal romania russia scotland serbia singapore slovakia slovenia spain sweden switzerland syria taiwan
    thailand tunisia turkey uganda ukraine uruguay venezuela vietnam wales zimbabwe london paris berlin rome
    madrid tokyo beijing moscow vienna prague dublin amsterdam brussels chicago boston seattle toronto sydney
    melbourne california texas florida ohio york washington oregon virginia massachusetts pennsylvania
    michigan illinois georgia arizona colorado nevada utah alaska hawaii
    """
)

PERSON_TITLES: Final = _words(
    """
    mr mrs ms dr prof sir lord lady king queen prince princess president senator governor general captain
    saint st
    """
)

FIRST_NAMES: Final = _words(
    """
    james john steve mike tom bill bob jim joe dan ben sam tim robert michael william david richard joseph
    thomas charles christopher daniel matthew anthony mark donald steven paul andrew joshua kenneth kevin
    brian george edward ronald timothy jason jeffrey ryan jacob gary nicholas eric jonathan stephen larry
    justin scott brandon benjamin samuel frank gregory raymond alexander patrick jack dennis jerry tyler aaron
    henry peter adam harry fred walter arthur albert louis carl ralph roger howard alan philip martin simon
    hans karl franz pierre jean jacques luis carlos jose mary patricia jennifer linda elizabeth barbara susan
    jessica sarah karen nancy lisa betty margaret sandra ashley kimberly emily donna michelle dorothy carol
    amanda melissa deborah stephanie rebecca sharon laura cynthia kathleen amy shirley angela helen anna
    brenda pamela nicole emma samantha katherine christine debra rachel catherine carolyn janet ruth maria
    heather diane virginia julie joyce victoria kelly christina lauren joan evelyn olivia judith megan cheryl
    martha andrea frances hannah jacqueline ann gloria jean kathryn alice teresa sara janice doris madison
    julia grace judy abigail marie denise beverly amber theresa marilyn danielle diana brittany natalie sophia
    rose isabella alexis kayla charlotte elena sofia marco giovanni adriana
    """
)

MONTHS: Final = (
    "January|February|March|April|May|June|July|August|September|October|November|December|"
    "Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec"
)

#: Capitalised words that start sentences or headings without naming anything.
STOP_WORDS: Final = _words(
    """
    a an the this that these those it its in on at of for to from by with as and or but if when while where
    which who whom whose what why how there here he she they we you i my our your his her their is are was
    were be been being has have had do does did not no yes all any each every some many most more less other
    such one two three first second after before during since until about above below also however then thus
    therefore because although though both either neither into onto over under between among through per via
    using use see note example figure table section chapter page step returns return set get add default true
    false none null can may might must should would could will shall let only just even still yet very so than
    too well up down out off again further once monday tuesday wednesday thursday friday saturday sunday today
    tomorrow yesterday
    """
)

#: Verbs (and verb-like phrases) read between two entities of a sentence as the relation's type.
RELATION_VERBS: Final = _words(
    """
    is was are were founded acquired bought owns owned leads led directed produced wrote written published
    released signed joined married born died located based headquartered created developed designed built
    manufactured invented discovered won awarded received played starred appeared managed coached chaired
    elected appointed succeeded replaced merged partnered competed defeated beat hosted sponsored funded
    supports supported uses used includes included contains contained depends requires replaces extends
    implements calls returns reads writes stores
    """
)
