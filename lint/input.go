package lint

import (
	"fmt"

	"github.com/eksdoctor/eksdoctor/cluster"
)

var invalidInput = &Check{
	ID:       "invalid-input",
	Title:    "Input could not be read",
	Family:   "input",
	Severity: Error,
	Doc: Doc{
		What: "A file, document or object could not be parsed or decoded, or a Terraform directory uses a module it never calls (Terraform rejects it with `Reference to undeclared module` before planning anything; when Terragrunt or AWS Proton files beside or above the directory may write declarations at run time, and for undeclared variables and locals, which a copy often leaves out, it is input-unresolved instead). The finding names the file and line; every other input is still analysed.",
		Why:  "Whatever the unreadable input declares (a NodePool, a taint, a role mapping) is missing from the analysis, so other findings may be incomplete; and kubectl, Helm or Terraform would reject the same input.",
		Fix:  "Correct the syntax or the field type at the reported line.",
	},
	Run: func(p *Pass) {
		for _, pr := range p.Model.Problems {
			if pr.Unresolved {
				continue
			}
			p.Report(Finding{
				Object:  pr.Object,
				Origin:  pr.Origin,
				Summary: pr.Message,
			})
		}
		// An ignore that names no check silences nothing: say so, rather
		// than let the finding it was meant for come back unexplained.
		for _, o := range p.Model.Objects {
			for _, id := range o.IgnoredChecks() {
				if !knownID(id) {
					p.Report(Finding{Object: o.Ref(), Origin: o.Origin,
						Summary: fmt.Sprintf("annotation %s of %s names an %s; it silences nothing", cluster.IgnoreAnnotation, o.Ref(), UnknownCheck(id))})
				}
			}
		}
		for _, s := range p.Model.Suppressions {
			for _, id := range s.Checks {
				if !knownID(id) {
					p.Report(Finding{Origin: s.Origin, Summary: fmt.Sprintf("ignore comment names an %s; it silences nothing", UnknownCheck(id))})
				}
			}
			if len(s.Checks) == 0 {
				p.Report(Finding{Origin: s.Origin, Summary: "ignore comment names no check (eksdoctor:ignore=ID[,ID] reason); it silences nothing"})
			}
		}
	},
}

var inputUnresolved = &Check{
	ID:       "input-unresolved",
	Title:    "Part of the input could not be read or evaluated",
	Family:   "input",
	Severity: Info,
	Doc: Doc{
		What: "Something the configuration uses could not be read or evaluated, though Terraform, Helm or kubectl would accept it (or would once the rest of the pipeline runs): a file outside the paths given to eksdoctor (only those are ever read) or not there, names a directory uses without declaring them (Terragrunt, AWS Proton and service brokers write such declarations at run time), a local module that is not there, a module eksdoctor does not model that creates compute, a map only partly known, a function eksdoctor does not evaluate, a chart or add-on eksdoctor has no description of, a version it had to assume. The finding names the expression or path and why; what depends on it is treated as unknown, and checks that depend on it say they could not verify rather than report a failure.",
		Why:  "eksdoctor never guesses: a check that depends on what it cannot see says nothing wrong about it, so a problem there may go unreported. Reading nothing outside the given paths keeps a scan of someone else's pull request from printing the files of the machine it runs on.",
		Fix:  "Give eksdoctor the directory that holds the file, module or chart (for example the repository root rather than one environment), or ignore the finding when the file is created later in the pipeline.",
	},
	Run: func(p *Pass) {
		for _, pr := range p.Model.Problems {
			if !pr.Unresolved {
				continue
			}
			p.Report(Finding{Object: pr.Object, Origin: pr.Origin, Summary: pr.Message})
		}
	},
}
