package bundle

import "strings"

// cp437High is code page 437 for bytes 0x80 to 0xFF (bytes below 0x80 are
// ASCII), as Python's cp437 codec maps them.
const cp437High = "ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜ¢£¥₧ƒ" +
	"áíóúñÑªº¿⌐¬½¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐" +
	"└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀" +
	"αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\u00a0"

var cp437Table = []rune(cp437High)

// decodeCP437 decodes s, a byte string in code page 437, to UTF-8.
func decodeCP437(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x80 {
			b.WriteByte(c)
		} else {
			b.WriteRune(cp437Table[c-0x80])
		}
	}
	return b.String()
}
