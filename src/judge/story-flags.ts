// Where each story's `passes` value sits in a prd.json's text, so one flag can be changed without
// reformatting the file (a person's indentation, key order and spacing stay as they wrote them).

/** One story of `userStories`: its id as text and the character range of its `passes` value, if it has one. */
export interface StoryFlag {
  id: string;
  passes: { start: number; end: number } | null;
  /** Offset of the story's closing `}`. */
  close: number;
}

/** The stories' ids and `passes` ranges, or null when the text is not a JSON object with a `userStories` list. */
export function locateStoryFlags(text: string): StoryFlag[] | null {
  const reader = new Reader(text);
  try {
    reader.space();
    if (text[reader.at] !== "{") return null;
    let stories: StoryFlag[] | null = null;
    reader.members((key) => {
      if (key === "userStories" && text[reader.at] === "[") stories = reader.stories();
      else reader.value();
    });
    return stories;
  } catch {
    return null;
  }
}

class Reader {
  at = 0;
  constructor(private readonly text: string) {}

  space(): void {
    while (/\s/.test(this.text[this.at] ?? "")) this.at += 1;
  }

  /** Reads `{ "key": value, ... }`, calling `onMember` with the reader at each value. */
  members(onMember: (key: string) => void): void {
    this.expect("{");
    this.space();
    if (this.text[this.at] === "}") {
      this.at += 1;
      return;
    }
    for (;;) {
      this.space();
      const key = JSON.parse(this.stringToken()) as string;
      this.space();
      this.expect(":");
      this.space();
      onMember(key);
      this.space();
      if (this.text[this.at] === ",") this.at += 1;
      else return this.expect("}");
    }
  }

  stories(): StoryFlag[] {
    const found: StoryFlag[] = [];
    this.items(() => {
      if (this.text[this.at] !== "{") return this.value();
      const story: StoryFlag = { id: "", passes: null, close: -1 };
      this.members((key) => {
        const start = this.at;
        this.value();
        if (key === "passes") story.passes = { start, end: this.at };
        if (key === "id") story.id = String(JSON.parse(this.text.slice(start, this.at)));
      });
      story.close = this.at - 1;
      found.push(story);
    });
    return found;
  }

  items(onItem: () => void): void {
    this.expect("[");
    this.space();
    if (this.text[this.at] === "]") {
      this.at += 1;
      return;
    }
    for (;;) {
      this.space();
      onItem();
      this.space();
      if (this.text[this.at] === ",") this.at += 1;
      else return this.expect("]");
    }
  }

  /** Skips one value of any kind. */
  value(): void {
    const char = this.text[this.at];
    if (char === "{") return this.members(() => this.value());
    if (char === "[") return this.items(() => this.value());
    if (char === '"') {
      this.stringToken();
      return;
    }
    const literal = /^(?:true|false|null|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(
      this.text.slice(this.at, this.at + 64),
    );
    if (!literal) throw new Error(`unexpected ${char ?? "end"} at ${this.at}`);
    this.at += literal[0].length;
  }

  stringToken(): string {
    const start = this.at;
    this.expect('"');
    while (this.at < this.text.length && this.text[this.at] !== '"') this.at += this.text[this.at] === "\\" ? 2 : 1;
    this.expect('"');
    return this.text.slice(start, this.at);
  }

  expect(char: string): void {
    if (this.text[this.at] !== char) throw new Error(`expected ${char} at ${this.at}`);
    this.at += 1;
  }
}
