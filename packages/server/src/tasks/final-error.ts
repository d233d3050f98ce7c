/** An error the task's owner reads as is, and which no retry can cure. */
export class FinalError extends Error {}
