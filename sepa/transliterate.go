package sepa

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Transliterate maps text to the SEPA basic Latin character set the EPC's
// implementation guidelines promise every bank accepts (a-z A-Z 0-9 and
// / - ? : ( ) . , ' + space), keeping as much of its meaning as a reader of
// a bank statement needs:
//
//   - German, Nordic and other letters with a customary spelling get it, as
//     ICAO Doc 9303 spells names in passports: ä→ae, ö→oe, ü→ue, ß→ss,
//     å→aa, æ→ae, ø→oe, œ→oe, þ→th, ł→l ("Müller" → "Mueller", which is
//     what German banks write), and đ→dj as Serbs and Croats write it
//     without the stroke ("Đoković" → "Djokovic"); an upper-case letter
//     becomes "Ae" or, in an upper-case word, "AE".
//   - Other accented Latin letters lose the accent ("Dvořák" → "Dvorak",
//     "Łódź" → "Lodz").
//   - Greek follows ELOT 743 (ISO 843): "Ελλάδα" → "Ellada", "Ευάγγελος" →
//     "Evangelos"; Cyrillic follows ICAO Doc 9303 ("Жуков" → "Zhukov"), but
//     Ukrainian and Serbian text is spelled as those languages spell it in
//     Latin letters ("Київ" → "Kyiv", "Љубица" → "Ljubica").
//   - Symbols take their nearest allowed form: & → +, quotes → ', dashes and
//     _ → -, brackets → ( ), ; → , and ! → ., @ → (at), # → No., and €, £,
//     $ and % become EUR, GBP, USD and pct.
//   - Compatibility forms are unfolded (ﬁ → fi, ½ → 1/2, full-width letters).
//   - Whatever is left (emoji, CJK, other scripts) becomes one "." per run,
//     so a reader sees that something stood there; marks and joiners that
//     only modify their neighbour vanish.
//
// Runs of white space become one space, and the ends are trimmed.
func Transliterate(s string) string {
	if clean(s) {
		return s
	}
	runes := []rune(norm.NFC.String(s))
	cyrillic := cyrillicVariant(s)
	var b strings.Builder
	b.Grow(len(s))
	unknownRun := false
	for i, r := range runes {
		var prev, next rune
		if i > 0 {
			prev = runes[i-1]
		}
		if i+1 < len(runes) {
			next = runes[i+1]
		}
		out, known := transliterateRune(r, prev, next, cyrillic)
		if !known {
			if !unknownRun {
				b.WriteByte('.')
			}
			unknownRun = true
			continue
		}
		if out == "" {
			continue
		}
		unknownRun = false
		if _, word := symbolWords[r]; word {
			if last := lastByte(&b); isAlnum(last) {
				b.WriteByte(' ')
			}
			b.WriteString(out)
			if unicode.IsLetter(next) || unicode.IsDigit(next) {
				b.WriteByte(' ')
			}
			continue
		}
		b.WriteString(out)
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// clean reports whether s is already in the SEPA set with single spaces
// between words, as most names and references are.
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 128 || !sepaASCII[s[i]] || s[i] == ' ' && (i == 0 || i == len(s)-1 || s[i-1] == ' ') {
			return false
		}
	}
	return true
}

// transliterateRune gives r's replacement in the SEPA set: "" for a
// character that only modifies its neighbours, and known false for one
// with no replacement. cyrillic spells the letters a language spells
// otherwise than ICAO's table.
func transliterateRune(r, prev, next rune, cyrillic map[rune]string) (out string, known bool) {
	switch {
	case r < 128 && sepaASCII[r]:
		return string(r), true
	case unicode.IsSpace(r):
		return " ", true
	case dropped(r):
		return "", true
	}
	lower := unicode.ToLower(r)
	if s, ok := latinLetters[lower]; ok {
		return withCase(s, r, prev, next), true
	}
	if s, ok := greekLetter(r, prev, next); ok {
		return withCase(s, r, prev, next), true
	}
	if s, ok := cyrillic[lower]; ok {
		return withCase(s, r, prev, next), true
	}
	if s, ok := cyrillicLetters[lower]; ok {
		return withCase(s, r, prev, next), true
	}
	if s, ok := symbols[r]; ok {
		return s, true
	}
	if s, ok := symbolWords[r]; ok {
		return s, true
	}
	// Accented letters and compatibility forms: keep what decomposes into
	// the set, as long as every part of the character has a replacement.
	var b strings.Builder
	for _, c := range norm.NFKD.String(string(r)) {
		switch {
		case c < 128 && sepaASCII[c]:
			b.WriteRune(c)
		case c == ' ':
			b.WriteByte(' ')
		case dropped(c):
		default:
			if s, ok := symbols[c]; ok {
				b.WriteString(s)
			} else if s, ok := latinLetters[unicode.ToLower(c)]; ok {
				b.WriteString(withCase(s, c, prev, next))
			} else {
				return "", false
			}
		}
	}
	if b.Len() == 0 {
		return "", false
	}
	return b.String(), true
}

// sepaASCII marks the characters of the SEPA basic Latin character set.
var sepaASCII = func() (set [128]bool) {
	for _, c := range "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/-?:().,'+ " {
		set[c] = true
	}
	return set
}()

// dropped reports whether r only changes how its neighbours look: combining
// marks, joiners and other format characters, emoji skin tones, and control
// characters, none of which stands for anything on its own.
func dropped(r rune) bool {
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Cc) ||
		r >= 0x1F3FB && r <= 0x1F3FF
}

// withCase writes a replacement s (in lower case) for r in r's case: an
// upper-case letter gives "Ae", or "AE" inside an upper-case word.
func withCase(s string, r, prev, next rune) string {
	if !unicode.IsUpper(r) || s == "" {
		return s
	}
	if len(s) == 1 || unicode.IsUpper(next) || !unicode.IsLetter(next) && unicode.IsUpper(prev) {
		return strings.ToUpper(s)
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func lastByte(b *strings.Builder) byte {
	s := b.String()
	if s == "" {
		return 0
	}
	return s[len(s)-1]
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// latinLetters spells the Latin letters that do not simply lose an accent,
// as ICAO Doc 9303 does (but for đ).
var latinLetters = map[rune]string{
	'ä': "ae", 'ö': "oe", 'ü': "ue", 'ß': "ss",
	'å': "aa", 'æ': "ae", 'ø': "oe", 'œ': "oe", 'þ': "th", 'ð': "d",
	'ł': "l", 'đ': "dj", 'ħ': "h", 'ı': "i", 'ĳ': "ij", 'ŀ': "l", 'ŋ': "n", 'ſ': "s",
}

// greekLetter spells a Greek letter after ELOT 743: ου is "ou", αυ, ευ and
// ηυ are "av", "ev", "iv" before a vowel or voiced consonant and "af", "ef",
// "if" otherwise, and γ before γ, ξ or χ is "n".
func greekLetter(r, prev, next rune) (string, bool) {
	base, mark := greekBase(r)
	s, ok := greekLetters[base]
	if !ok {
		return "", false
	}
	switch base {
	case 'υ':
		if mark == '\u0308' { // a diaeresis says the vowels are read apart
			break
		}
		prevBase, prevMark := greekBase(prev)
		if prevMark != 0 {
			break
		}
		switch prevBase {
		case 'ο':
			return "u", true
		case 'α', 'ε', 'η':
			nextBase, _ := greekBase(next)
			if strings.ContainsRune("αεηιουωβγδζλμνρ", nextBase) {
				return "v", true
			}
			return "f", true
		}
	case 'γ':
		if nextBase, _ := greekBase(next); nextBase == 'γ' || nextBase == 'ξ' || nextBase == 'χ' {
			return "n", true
		}
	}
	return s, true
}

// greekBase gives a Greek letter in lower case without its accent, and the
// accent (tonos or diaeresis) if it had one.
func greekBase(r rune) (base, mark rune) {
	if !unicode.Is(unicode.Greek, r) {
		return 0, 0
	}
	for i, c := range norm.NFD.String(string(unicode.ToLower(r))) {
		if i == 0 {
			base = c
		} else if c == '\u0308' || mark == 0 {
			mark = c
		}
	}
	return base, mark
}

var greekLetters = map[rune]string{
	'α': "a", 'β': "v", 'γ': "g", 'δ': "d", 'ε': "e", 'ζ': "z", 'η': "i", 'θ': "th",
	'ι': "i", 'κ': "k", 'λ': "l", 'μ': "m", 'ν': "n", 'ξ': "x", 'ο': "o", 'π': "p",
	'ρ': "r", 'σ': "s", 'ς': "s", 'τ': "t", 'υ': "y", 'φ': "f", 'χ': "ch", 'ψ': "ps",
	'ω': "o",
}

// cyrillicLetters spells Russian, Ukrainian, Belarusian, Bulgarian, Serbian
// and Macedonian letters as ICAO Doc 9303 does; the soft sign is left out.
var cyrillicLetters = map[rune]string{
	'а': "a", 'б': "b", 'в': "v", 'г': "g", 'д': "d", 'е': "e", 'ё': "e", 'ж': "zh",
	'з': "z", 'и': "i", 'й': "i", 'к': "k", 'л': "l", 'м': "m", 'н': "n", 'о': "o",
	'п': "p", 'р': "r", 'с': "s", 'т': "t", 'у': "u", 'ф': "f", 'х': "kh", 'ц': "ts",
	'ч': "ch", 'ш': "sh", 'щ': "shch", 'ъ': "ie", 'ы': "y", 'ь': "", 'э': "e", 'ю': "iu",
	'я': "ia", 'ґ': "g", 'є': "ie", 'і': "i", 'ї': "i", 'ў': "u", 'ђ': "d", 'ј': "j",
	'љ': "lj", 'њ': "nj", 'ћ': "c", 'џ': "dz", 'ѓ': "g", 'ќ': "k", 'ѕ': "dz",
}

// cyrillicVariant gives the spellings of Ukrainian for a text with a letter
// only Ukrainian has, after Ukraine's national system ("Київ" → "Kyiv"), and
// of the Serbian and Macedonian Latin alphabets for a text with a letter only
// those have ("Љубица" → "Ljubica"): for their names these are the spellings
// their bearers use.
func cyrillicVariant(s string) map[rune]string {
	switch {
	case strings.ContainsAny(s, "іїєґІЇЄҐ"):
		return ukrainianLetters
	case strings.ContainsAny(s, "ђјљњћџѓќѕЂЈЉЊЋЏЃЌЅ"):
		return serbianLetters
	}
	return nil
}

var ukrainianLetters = map[rune]string{
	'г': "h", 'ґ': "g", 'и': "y", 'і': "i", 'ї': "i", 'є': "ie", 'й': "i",
}

var serbianLetters = map[rune]string{
	'ж': "z", 'х': "h", 'ц': "c", 'ч': "c", 'ш': "s", 'ђ': "dj", 'ћ': "c",
	'џ': "dz", 'ѓ': "gj", 'ќ': "kj", 'ѕ': "dz",
}

// symbols gives punctuation its nearest form in the SEPA set.
var symbols = map[rune]string{
	'&': "+", '"': "'", '“': "'", '”': "'", '„': "'", '«': "'", '»': "'", '‹': "'", '›': "'",
	'‘': "'", '’': "'", '‚': "'", '`': "'", '´': "'",
	'_': "-", '~': "-", '–': "-", '—': "-", '‒': "-", '―': "-", '−': "-", '‐': "-", '‑': "-",
	'[': "(", '{': "(", '<': "(", ']': ")", '}': ")", '>': ")",
	';': ",", '!': ".", '\\': "/", '|': "/", '⁄': "/", '×': "x", '·': ".", '•': ".",
	'@': "(at)", '#': "No.",
}

// symbolWords are symbols that become a word, set apart by spaces from the
// number they go with ("12€" → "12 EUR").
var symbolWords = map[rune]string{
	'€': "EUR", '£': "GBP", '$': "USD", '%': "pct",
}
