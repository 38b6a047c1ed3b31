package cli

// oNoFollow: Windows opens have no such flag; the runtime's files there
// are its own.
const oNoFollow = 0

func isSymlinkRefused(error) bool { return false }
