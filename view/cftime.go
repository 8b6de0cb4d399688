package view

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// This file decodes CF time coordinates ("hours since 2026-01-01 00:00:00")
// for the names data.hdr gives its bands, so that QGIS lists a time stack's
// bands by date.

// cfUnitDurations are the CF (UDUNITS) time units a coordinate may count
// in, as durations.
var cfUnitDurations = map[string]time.Duration{
	"nanoseconds": time.Nanosecond, "nanosecond": time.Nanosecond, "ns": time.Nanosecond,
	"microseconds": time.Microsecond, "microsecond": time.Microsecond, "us": time.Microsecond,
	"milliseconds": time.Millisecond, "millisecond": time.Millisecond, "ms": time.Millisecond,
	"seconds": time.Second, "second": time.Second, "secs": time.Second, "sec": time.Second, "s": time.Second,
	"minutes": time.Minute, "minute": time.Minute, "mins": time.Minute, "min": time.Minute,
	"hours": time.Hour, "hour": time.Hour, "hrs": time.Hour, "hr": time.Hour, "h": time.Hour,
	"days": 24 * time.Hour, "day": 24 * time.Hour, "d": 24 * time.Hour,
}

// gregorianStart is where the "standard" calendar becomes the proleptic
// Gregorian one Go's time counts in.
var gregorianStart = time.Date(1582, 10, 15, 0, 0, 0, 0, time.UTC)

// cfTimes decodes values counted in CF units since an epoch, in calendar
// ("" is "standard"), as text: dates alone when every time is midnight,
// else to the minute or the second as needed. ok is false when the units
// are not a time since an epoch zarrfs can place, the calendar is another
// (noleap, 360_day …), or a time falls outside years 1582 to 9999.
func cfTimes(values []float64, units, calendar string) (text []string, ok bool) {
	switch strings.ToLower(calendar) {
	case "", "standard", "gregorian", "proleptic_gregorian":
	default:
		return nil, false
	}
	unit, epochText, found := strings.Cut(strings.TrimSpace(units), " since ")
	step, known := cfUnitDurations[strings.ToLower(strings.TrimSpace(unit))]
	if !found || !known {
		return nil, false
	}
	epoch, ok := parseCFEpoch(strings.TrimSpace(epochText))
	if !ok {
		return nil, false
	}
	times := make([]time.Time, len(values))
	midnight, minute := true, true
	for i, v := range values {
		ns := v * float64(step)
		if math.IsNaN(ns) || math.Abs(ns) > 1<<62 {
			return nil, false
		}
		t := epoch.Add(time.Duration(math.Round(ns)))
		if t.Before(gregorianStart) || t.Year() > 9999 {
			return nil, false
		}
		times[i] = t
		midnight = midnight && t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 && t.Nanosecond() == 0
		minute = minute && t.Second() == 0 && t.Nanosecond() == 0
	}
	layout := "2006-01-02 15:04:05"
	switch {
	case midnight:
		layout = "2006-01-02"
	case minute:
		layout = "2006-01-02 15:04"
	}
	text = make([]string, len(times))
	for i, t := range times {
		text[i] = t.Format(layout)
	}
	return text, true
}

// parseCFEpoch parses a CF reference time: a date "Y-M-D" (fields need
// not be padded), optionally a time "h:m[:s[.f]]" after a space or "T",
// optionally UTC as "Z", "UTC", "+00:00", "+0000" or "+00". Other time
// zones are not placed.
func parseCFEpoch(s string) (time.Time, bool) {
	s = strings.TrimSuffix(strings.TrimSuffix(s, "Z"), " UTC")
	for _, utc := range []string{"+00:00", "+0000", "+00", "+0:00"} {
		s = strings.TrimSpace(strings.TrimSuffix(s, utc))
	}
	date, clock, _ := strings.Cut(strings.Replace(s, "T", " ", 1), " ")
	d := strings.Split(date, "-")
	if len(d) != 3 {
		return time.Time{}, false
	}
	var ymd [3]int
	for i, f := range d {
		n, err := strconv.Atoi(f)
		if err != nil {
			return time.Time{}, false
		}
		ymd[i] = n
	}
	var hms [3]float64
	if clock = strings.TrimSpace(clock); clock != "" {
		c := strings.Split(clock, ":")
		if len(c) > 3 {
			return time.Time{}, false
		}
		for i, f := range c {
			x, err := strconv.ParseFloat(f, 64)
			if err != nil || x < 0 || x >= 60 {
				return time.Time{}, false
			}
			hms[i] = x
		}
	}
	if ymd[1] < 1 || ymd[1] > 12 || ymd[2] < 1 || ymd[2] > 31 || hms[0] >= 24 {
		return time.Time{}, false
	}
	sec := math.Floor(hms[2])
	return time.Date(ymd[0], time.Month(ymd[1]), ymd[2], int(hms[0]), int(hms[1]), int(sec),
		int(math.Round((hms[2]-sec)*1e9)), time.UTC), true
}
