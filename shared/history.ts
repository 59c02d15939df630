/** A conversation's prompt history keeps this many entries, the newest (DESIGN §4). */
export const historyLimit = 500;
