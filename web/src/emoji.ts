// The reaction picker's searchable list: common emoji, each with a few English words (its name and what people
// search it by; together, the button's label). Kept small on purpose: the whole list is about 2 KB of the gzipped bundle.
const LIST =
  '👍 thumbs up yes ok|👎 thumbs down no|❤️ red heart love|😂 joy laughing tears|🎉 party popper tada celebrate|😮 open mouth wow surprised|' +
  '😢 crying sad tear|🙏 folded hands please thanks pray|👏 clapping hands applause|🔥 fire hot lit|✅ check mark done yes|❌ cross mark no wrong|' +
  '👀 eyes looking|💯 hundred points perfect|🚀 rocket launch ship|👌 ok hand perfect|🙌 raising hands hooray|💪 flexed biceps strong|' +
  '🤝 handshake deal agree|👋 waving hand hello bye|✌️ victory hand peace|🤞 crossed fingers luck hope|🫡 saluting face respect|🤷 shrug whatever dunno|' +
  '😀 grinning face smile happy|😃 grinning big eyes smile happy|😄 grinning smiling eyes happy|😁 beaming face grin|😅 grinning sweat relief|' +
  '🤣 rolling on the floor laughing rofl|🙂 slightly smiling face|🙃 upside down face silly|😉 winking face wink|😊 smiling blush happy|' +
  '😇 smiling halo angel innocent|🥰 smiling hearts love|😍 heart eyes love|🤩 star struck wow|😘 blowing a kiss love|😋 yum delicious tongue|' +
  '😛 tongue out playful|😜 winking tongue crazy|🤪 zany face crazy|🤗 hugging face hug|🤔 thinking face hmm|🤫 shushing face quiet|' +
  '🤭 hand over mouth oops giggle|😐 neutral face meh|😑 expressionless meh|😶 no mouth speechless|😏 smirking face smirk|😒 unamused face|' +
  '🙄 rolling eyes whatever|😬 grimacing face awkward|😌 relieved face calm|😔 pensive face sad|😪 sleepy face tired|😴 sleeping face zzz|' +
  '😷 face with mask sick|🤒 thermometer sick ill|🤢 nauseated face sick gross|🤮 vomiting face sick gross|🥵 hot face heat|🥶 cold face freezing|' +
  '😵 dizzy face|🤯 exploding head mind blown|🥳 partying face celebrate|😎 sunglasses cool|🤓 nerd face geek|🧐 monocle curious|' +
  '😕 confused face|😟 worried face|🙁 slightly frowning face sad|😯 hushed face surprised|😲 astonished face shocked|😳 flushed face embarrassed|' +
  '🥺 pleading face please puppy eyes|😦 frowning open mouth|😨 fearful face scared|😰 anxious sweat nervous|😥 sad but relieved|😭 loudly crying sob|' +
  '😱 screaming in fear shocked|😖 confounded face|😣 persevering face|😞 disappointed face|😓 downcast sweat|😩 weary face tired|😫 tired face|' +
  '🥱 yawning face bored|😤 steam from nose triumph angry|😡 pouting face angry rage|😠 angry face mad|🤬 cursing face swearing|😈 smiling horns devil|' +
  '💀 skull dead|💩 pile of poo|🤡 clown face|👻 ghost boo|👽 alien|🤖 robot|😺 grinning cat|🙈 see no evil monkey|🙉 hear no evil monkey|🙊 speak no evil monkey|' +
  '💔 broken heart|🧡 orange heart|💛 yellow heart|💚 green heart|💙 blue heart|💜 purple heart|🖤 black heart|🤍 white heart|💖 sparkling heart|' +
  '💕 two hearts love|💋 kiss mark|💥 collision boom|💫 dizzy star|💦 sweat droplets|💤 zzz sleep|⭐ star|🌟 glowing star|✨ sparkles shiny|⚡ high voltage lightning|' +
  '🌈 rainbow|☀️ sun sunny|🌙 crescent moon night|☕ hot beverage coffee tea|🍵 tea cup|🍺 beer mug cheers|🍻 clinking beer mugs cheers|🥂 clinking glasses cheers toast|' +
  '🍷 wine glass|🍕 pizza|🍔 hamburger burger|🍰 shortcake cake|🎂 birthday cake|🍩 doughnut donut|🍿 popcorn|🍎 red apple|🥑 avocado|' +
  '🎁 wrapped gift present|🎈 balloon party|🎊 confetti ball celebrate|🏆 trophy winner|🥇 first place medal gold|⚽ soccer ball football|🏀 basketball|' +
  '🎮 video game controller|🎵 musical note music|🎶 musical notes music|📌 pushpin pin|📎 paperclip|📝 memo note write|📅 calendar date|⏰ alarm clock time|' +
  '⌛ hourglass done waiting|💡 light bulb idea|🔔 bell notification|📣 megaphone announce|💬 speech balloon comment|💭 thought balloon think|' +
  '❓ question mark|❗ exclamation mark|⚠️ warning caution|🚫 prohibited no|🛑 stop sign|🆗 ok button|🆒 cool button|🆕 new button|' +
  '🐶 dog face puppy|🐱 cat face kitten|🦊 fox|🐻 bear|🐼 panda|🐸 frog|🐵 monkey face|🦄 unicorn|🐝 honeybee bee|🦋 butterfly|🐢 turtle slow|' +
  '🌸 cherry blossom flower|🌹 rose flower|🌻 sunflower|🌵 cactus|🍀 four leaf clover luck|🎄 christmas tree|🏠 house home|✈️ airplane travel|🚗 car|💰 money bag|💸 money with wings';

export interface EmojiEntry {
  emoji: string;
  /** The words together: the button's label, e.g. "thumbs up yes ok". */
  name: string;
  words: string[];
}

let entries: EmojiEntry[] | null = null;

/** Every entry (parsed once, on first use). */
export function allEmoji(): EmojiEntry[] {
  return (entries ??= LIST.split('|').map((item) => {
    const [emoji, ...words] = item.split(' ');
    return { emoji: emoji!, name: words.join(' '), words };
  }));
}

/** The entries whose words begin with every word of the query ("hea" finds the hearts; "thu up" 👍). */
export function findEmoji(query: string): EmojiEntry[] {
  const wanted = query.toLowerCase().split(/\s+/).filter(Boolean);
  return allEmoji().filter((e) => wanted.every((w) => e.words.some((word) => word.startsWith(w))));
}
