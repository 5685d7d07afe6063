package javastr

import (
	"math"
	"testing"
)

func TestParseJavaLong(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"-0", 0, true}, {"+7", 7, true}, {"007", 7, true},
		{"9223372036854775807", math.MaxInt64, true},
		{"-9223372036854775808", math.MinInt64, true},
		{"9223372036854775808", 0, false}, {"-9223372036854775809", 0, false},
		{"٤٢", 42, true}, {"१०", 10, true}, {"１", 1, true}, {"-٣", -3, true},
		{"", 0, false}, {"-", 0, false}, {"+", 0, false}, {"--1", 0, false}, {"+-1", 0, false},
		{" 1", 0, false}, {"1 ", 0, false}, {"1_000", 0, false}, {"1e3", 0, false}, {"𝟏", 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseLong(tt.in)
		if ok != tt.ok || got != tt.want {
			t.Errorf("ParseLong(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParseInt(t *testing.T) {
	tests := []struct {
		in    string
		radix int
		want  int32
		ok    bool
	}{
		{"0", 10, 0, true}, {"-0", 10, 0, true}, {"+7", 10, 7, true}, {"010", 10, 10, true},
		{"2147483647", 10, math.MaxInt32, true}, {"-2147483648", 10, math.MinInt32, true},
		{"2147483648", 10, 0, false}, {"-2147483649", 10, 0, false},
		{"\u0661\u0662\u0667", 10, 127, true}, {"\uff11", 10, 1, true},
		{"ffff", 16, 0xffff, true}, {"\uff21", 16, 10, true}, {"g", 16, 0, false}, {"a", 10, 0, false},
		{"", 10, 0, false}, {"-", 10, 0, false}, {"+", 16, 0, false}, {" 1", 10, 0, false}, {"\U0001d7cf", 10, 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseInt(tt.in, tt.radix)
		if ok != tt.ok || got != tt.want {
			t.Errorf("ParseInt(%q, %d) = %d, %v; want %d, %v", tt.in, tt.radix, got, ok, tt.want, tt.ok)
		}
	}
}
