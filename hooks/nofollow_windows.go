package hooks

// oNoFollow: Windows opens have no such flag; the caller's look at the
// path, and its stat of the open file, judge what it opened.
const oNoFollow = 0
