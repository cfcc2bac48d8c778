// Package report renders findings as text (grouped by object, colored on a
// terminal), JSON (a versioned, stable schema) and SARIF 2.1.0. Rendering is pure
// and byte-stable: the same findings always give the same bytes.
package report
