package sepa_test

import (
	"strings"
	"testing"

	"github.com/paybybank/checkout/sepa"
)

func TestTransliterate(t *testing.T) {
	for _, c := range []struct{ lang, in, want string }{
		{"German", "Jörg Müller, Straße", "Joerg Mueller, Strasse"},
		{"German upper case", "MÜLLER GMBH", "MUELLER GMBH"},
		{"German initial", "Ö. Ärger", "Oe. Aerger"},
		{"Polish", "Łódź, Żółć, Świętochłowice", "Lodz, Zolc, Swietochlowice"},
		{"Greek", "Ελλάδα", "Ellada"},
		{"Greek digraphs", "Ευάγγελος Παπαδόπουλος", "Evangelos Papadopoulos"},
		{"Greek before a voiceless consonant", "Ευθυμίου", "Efthymiou"},
		{"Greek upper case", "ΑΘΗΝΑ", "ATHINA"},
		{"Russian", "Жуков Щукин Юлия", "Zhukov Shchukin Iuliia"},
		{"Ukrainian", "Київ, Григорій", "Kyiv, Hryhorii"},
		{"Serbian", "Ђоковић Љубица", "Djokovic Ljubica"},
		{"Serbian in Latin letters", "Đoković", "Djokovic"},
		{"Czech", "Dvořák, Šťastný, Čech", "Dvorak, Stastny, Cech"},
		{"French", "Françoise Lefèvre, Cœur d’Alène", "Francoise Lefevre, Coeur d'Alene"},
		{"Nordic", "Ålesund Søren Þór Æbelø", "Aalesund Soeren Thor Aebeloe"},
		{"Swedish", "Björk Åsa", "Bjoerk Aasa"},
		{"Spanish and Portuguese", "Muñoz São João", "Munoz Sao Joao"},
		{"Turkish and Romanian", "Işık Ştefan Țară", "Isik Stefan Tara"},
		{"emoji", "Danke 🙏🏽🙏 für alles 👍", "Danke . fuer alles ."},
		{"family emoji joined", "👨‍👩‍👧 Familie", ". Familie"},
		{"CJK", "山田 Taro", ". Taro"},
		{"ampersand", "Müller & Söhne", "Mueller + Soehne"},
		{"quotes and dashes", `„Bio“ – Laden_2 «x»`, "'Bio' - Laden-2 'x'"},
		{"brackets and semicolons", "[A-1]; {B}!", "(A-1), (B)."},
		{"money and percent", "12€ off, 10% back, $5", "12 EUR off, 10 pct back, USD 5"},
		{"e-mail and number", "ann@example.com #42", "ann(at)example.com No.42"},
		{"compatibility forms", "ﬁle ½ ＡＢＣ ①", "file 1/2 ABC 1"},
		{"white space", "  Refund\tA-1\n\n damaged  ", "Refund A-1 damaged"},
		{"combining accent", "Jose\u0301", "Jose"},
		{"control characters", "A\x00B\x7fC", "ABC"},
		{"already SEPA", "Refund A-1: damaged (2/3)? ok+'", "Refund A-1: damaged (2/3)? ok+'"},
	} {
		t.Run(c.lang, func(t *testing.T) {
			if got := sepa.Transliterate(c.in); got != c.want {
				t.Errorf("Transliterate(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestTransliterateGivesOnlyTheSEPASet(t *testing.T) {
	var all []rune
	for r := rune(0); r < 0x3000; r++ {
		all = append(all, r)
	}
	all = append(all, '😀', '🇩', '🇪', '中', 0xFEFF, 0x1F3FD)
	for _, r := range all {
		for _, s := range []string{string(r), "a" + string(r) + "b", string(r) + string(r)} {
			got := sepa.Transliterate(s)
			if i := strings.IndexFunc(got, func(c rune) bool { return !strings.ContainsRune(sepaSet, c) }); i >= 0 {
				t.Fatalf("Transliterate(%q) = %q holds %q", s, got, got[i:])
			}
		}
	}
}

// sepaSet is the EPC's SEPA basic Latin character set.
const sepaSet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/-?:().,'+ "
