package runtime

// Support is a tri-state probe result: a probe that could not decide says
// unknown, never supported.
type Support string

const (
	Supported   Support = "supported"
	Unsupported Support = "unsupported"
	Unknown     Support = "unknown"
)

// Probe is one host capability as `doctor` found it just now.
type Probe struct {
	Name   string  `json:"name"`
	Status Support `json:"status"`
	Detail string  `json:"detail,omitempty"`
}

// LevelSupport says whether a level can be honoured here and, if not,
// which probes are missing.
type LevelSupport struct {
	Level   Level    `json:"level"`
	OK      bool     `json:"ok"`
	Missing []string `json:"missing,omitempty"`
}

// Diagnosis is the output of `doctor`: a fresh probe of the host. It is a
// diagnosis, not proof — each launch verifies its own live container.
type Diagnosis struct {
	Backend string         `json:"backend"`
	Tier    string         `json:"tier"`
	Probes  []Probe        `json:"probes"`
	Levels  []LevelSupport `json:"levels"`
	Note    string         `json:"note"`
}

// DiagnosisNote is printed with every diagnosis.
const DiagnosisNote = "doctor is a diagnosis of this host, not proof: every launch verifies its own container from host facts"

// Doctor is implemented by backends that can probe their host.
type Doctor interface {
	Doctor() *Diagnosis
}

// LevelsFrom decides which levels the probes allow: strict needs every
// probe in strict, standard every probe in standard; degraded always runs.
func LevelsFrom(probes []Probe, strict, standard []string) []LevelSupport {
	status := map[string]Support{}
	for _, p := range probes {
		status[p.Name] = p.Status
	}
	need := func(l Level, names []string) LevelSupport {
		ls := LevelSupport{Level: l, OK: true}
		for _, n := range names {
			if status[n] != Supported {
				ls.OK = false
				ls.Missing = append(ls.Missing, n)
			}
		}
		return ls
	}
	return []LevelSupport{need(LevelStrict, strict), need(LevelStandard, standard), {Level: LevelDegraded, OK: true}}
}
