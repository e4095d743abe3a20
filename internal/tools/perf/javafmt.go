package perf

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// javaDateFormat formats t with a java.text.SimpleDateFormat pattern. It
// knows the letters the perf tools' users pass: y M d H h m s S a E z Z X,
// 'quoted text' and ” for a quote; other letters are copied.
func javaDateFormat(pattern string, t time.Time) string {
	var b strings.Builder
	for i := 0; i < len(pattern); {
		c := pattern[i]
		if c == '\'' {
			if i+1 < len(pattern) && pattern[i+1] == '\'' {
				b.WriteByte('\'')
				i += 2
				continue
			}
			end := strings.IndexByte(pattern[i+1:], '\'')
			if end < 0 {
				b.WriteString(pattern[i+1:])
				break
			}
			b.WriteString(pattern[i+1 : i+1+end])
			i += end + 2
			continue
		}
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			b.WriteByte(c)
			i++
			continue
		}
		n := 1
		for i+n < len(pattern) && pattern[i+n] == c {
			n++
		}
		i += n
		pad := func(v int) {
			s := strconv.Itoa(v)
			for len(s) < n {
				s = "0" + s
			}
			b.WriteString(s)
		}
		switch c {
		case 'y':
			if n == 2 {
				s := strconv.Itoa(t.Year() % 100)
				if len(s) < 2 {
					s = "0" + s
				}
				b.WriteString(s)
			} else {
				pad(t.Year())
			}
		case 'M':
			switch {
			case n >= 4:
				b.WriteString(t.Month().String())
			case n == 3:
				b.WriteString(t.Month().String()[:3])
			default:
				pad(int(t.Month()))
			}
		case 'd':
			pad(t.Day())
		case 'H':
			pad(t.Hour())
		case 'h':
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			pad(h)
		case 'm':
			pad(t.Minute())
		case 's':
			pad(t.Second())
		case 'S':
			pad(t.Nanosecond() / int(time.Millisecond))
		case 'a':
			if t.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case 'E':
			if n >= 4 {
				b.WriteString(t.Weekday().String())
			} else {
				b.WriteString(t.Weekday().String()[:3])
			}
		case 'z':
			name, _ := t.Zone()
			b.WriteString(name)
		case 'Z':
			b.WriteString(t.Format("-0700"))
		case 'X':
			if _, off := t.Zone(); off == 0 {
				b.WriteString("Z")
			} else {
				b.WriteString(t.Format("-07:00"))
			}
		default:
			b.WriteString(strings.Repeat(string(c), n))
		}
	}
	return b.String()
}

func sortInt64s(s []int64) { slices.Sort(s) }
