// Package cli is eksdoctor's command line: flags into option structs, loaders,
// analysis, reporters, exit codes. It is the only layer besides the loaders that
// does I/O, and it writes only to the writers it is given so it can be tested in
// process.
package cli
