"""Demo topics 111–115: low-light plants, bathtub caulk, robot vacuums, compost, cabinets."""

from __future__ import annotations

from .spec import doc, topic

TOPICS = [
    topic(
        "111",
        "garden",
        text="best indoor plants for low light",
        description="""
            The user has a dim room or a north-facing flat and wants houseplants that will
            do well with little light.
        """,
        narrative="""
            A perfect document recommends several named plants that tolerate low light
            (for example snake plant, ZZ plant, pothos, cast iron plant, peace lily), with
            care notes and realistic expectations about what low light means. A good list
            with less detail is highly relevant. A care guide for one suitable plant, or
            advice on grow lights, is relevant. Houseplant care in general, or plants for
            bright windows, is marginal. Outdoor shade gardens, plant-based diets and
            industrial plants are not relevant.
        """,
        docs=[
            doc(
                4,
                "guide",
                "Nine houseplants that thrive in low light",
                """
                Low light does not mean no light: these plants cope with a spot a few
                metres from a north window or a dim corner, but none will grow in a room
                without windows.

                - **Snake plant**: nearly indestructible; water once a month.
                - **ZZ plant**: glossy leaves, stores water in its rhizomes.
                - **Pothos**: trailing vines; leaves get smaller and greener in low light.
                - **Cast iron plant**: lives up to its name in cold, dark hallways.
                - **Peace lily**: droops dramatically when thirsty, recovers fast.
                - **Heartleaf philodendron**: like pothos, but with softer leaves.
                - **Chinese evergreen**: patterned leaves, dislikes cold draughts.
                - **Parlour palm**: a slow, soft palm for shady rooms.
                - **Dracaena**: tall and architectural.

                Water all of them less than you think: in low light, soil dries slowly and
                root rot is the main killer.
            """,
            ),
            doc(
                4,
                "forum",
                "North-facing flat: which plants actually survived?",
                """
                Five years in a gloomy ground-floor flat, here is my honest list.

                Thrived: snake plants, ZZ, pothos (grew across a whole bookcase), cast
                iron plant, and a peace lily that flowers every spring. Survived but sulked:
                a parlour palm and a Chinese evergreen. Died: fiddle-leaf fig, succulents,
                calathea (the last one was probably my fault).

                Tip: water once the pot feels light, and clean the leaves so they catch
                what light there is.
            """,
                extra={"replies": 52},
            ),
            doc(
                3,
                "blog",
                "Low light houseplants for beginners",
                """
                If you kill plants, start with the snake plant, the ZZ plant and pothos.
                All three tolerate low light, irregular watering and dry air. Put them
                within a few metres of a window, water when the soil is dry and feed twice
                a year.
            """,
            ),
            doc(
                3,
                "guide",
                "ZZ plant care: the plant that tolerates neglect",
                """
                The ZZ plant grows from potato-like rhizomes that store water, which makes
                it perfect for low light and forgetful owners. Water only when the soil is
                completely dry, about every three to four weeks. It grows slowly in low
                light but stays glossy and healthy.
            """,
            ),
            doc(
                3,
                "review",
                "The best plants for offices without windows",
                """
                Without any daylight, even tough plants struggle, but under office
                fluorescent light pothos, ZZ plants and snake plants do surprisingly well.
                Chinese evergreens also adapt. Rotate plants near a window monthly if you
                can.
            """,
            ),
            doc(
                2,
                "product",
                "Snake plant 'Laurentii', 17 cm pot",
                """
                Upright sword-shaped leaves edged in yellow. Tolerates low light and
                irregular watering; a classic beginner plant.
            """,
                specs=[
                    ("Height", "40–50 cm"),
                    ("Light", "low to bright indirect"),
                    ("Price", "$22"),
                ],
                extra={"price": "$22", "rating": "4.8 / 5"},
            ),
            doc(
                2,
                "guide",
                "Do you need a grow light? A simple guide",
                """
                If a plant stretches towards the window, loses leaves or stops growing, it
                needs more light. A full-spectrum LED grow light, 30 cm above the plant for
                10–12 hours a day, can turn a dark corner into a good spot for almost any
                houseplant.
            """,
            ),
            doc(
                2,
                "faq",
                "How much light is low light?",
                """
                Houseplant labels use "low light" for spots that get no direct sun and are
                more than two metres from a window, or near a north-facing window. If you
                can read comfortably at midday without a lamp, most low-light plants will
                manage.
            """,
            ),
            doc(
                1,
                "guide",
                "How often should you water houseplants?",
                """
                There is no fixed schedule. Push a finger into the soil: if the top few
                centimetres are dry, water thoroughly until it drains. Plants need less in
                winter and in low light.

                Pots with drainage holes make it far harder to over-water: empty the saucer half
                an hour after watering. Plants in terracotta dry faster than plants in glazed or
                plastic pots.
            """,
            ),
            doc(
                1,
                "blog",
                "Plants that love a bright south-facing window",
                """
                Cacti, succulents, citrus and bird of paradise plants all enjoy full sun
                indoors. Turn them every few weeks so they grow evenly.

                In summer, a south window can scorch leaves through the glass, so a sheer
                curtain helps at midday. Herbs like rosemary and thyme also do well on a sunny
                sill.
            """,
                also={"116": 1},
            ),
            doc(
                1,
                "guide",
                "Repotting houseplants in spring",
                """
                Repot when roots circle the pot or grow out of the drainage holes. Move up
                only one pot size and use fresh potting mix suited to the plant.

                Water the plant the day before to make it easier to slide out, tease out
                circling roots, and set it at the same depth in the new pot. Keep it out of
                strong sun for a week while it settles.
            """,
            ),
            doc(
                0,
                "guide",
                "Designing a shade garden under trees",
                """
                Hostas, ferns, hellebores and foxgloves thrive in dry shade beneath trees.
                Improve the soil with leaf mould and water well in the first year.

                Plant in autumn, when the soil is still warm and the trees are losing their
                leaves, so roots establish before summer's competition for water. Spring bulbs
                like snowdrops and wood anemones flower before the canopy closes.
            """,
            ),
            doc(
                0,
                "blog",
                "Five easy plant-based dinners for busy weeknights",
                """
                Chickpea curry, black bean tacos, lentil bolognese, tofu stir-fry and a big
                bowl of vegetable minestrone: all ready in thirty minutes.

                Keep tins of beans and chickpeas, a bag of lentils and a jar of curry paste in
                the cupboard, and most of these come together from the store cupboard plus one
                fresh vegetable. Each recipe serves four and leftovers make tomorrow's lunch.
            """,
                site="example-kitchen.test",
            ),
            doc(
                0,
                "news",
                "Water treatment plant upgrade approved",
                """
                The city council approved a major upgrade to the main water treatment
                plant, improving filtration and adding backup power.

                Construction will begin next spring and take about three years. Officials said
                residents will not see interruptions to supply during the works, and that water
                rates will rise modestly to pay for the project.
            """,
                extra={"published": "2023-06-15"},
            ),
            doc(
                0,
                "product",
                "Dimmable LED floor lamp, warm white",
                """
                A slim floor lamp with a dimmable warm-white LED for reading corners and
                low-light living rooms.

                The head tilts and the stem bends, so you can point the light at a book or wash
                it up a wall. A foot switch cycles through brightness levels.
            """,
                specs=[("Brightness", "2,000 lm"), ("Price", "$89")],
                extra={"price": "$89"},
            ),
        ],
    ),
    topic(
        "112",
        "home",
        text="how to recaulk a bathtub",
        description="""
            The user wants to remove old, mouldy or cracked caulk around their bathtub and
            apply a new bead themselves.
        """,
        narrative="""
            A perfect document covers the whole job: removing the old caulk and residue,
            cleaning and drying, choosing a bathroom silicone, taping, applying and
            smoothing the bead, and curing time (filling the tub first is a plus).
            Documents covering most steps, or removal only in depth, are highly relevant
            or relevant. Caulking other places (windows, kitchens) or grout work is
            marginal. Bathtub products, bathtub refinishing and other uses of "caulk"
            unrelated to tubs are mostly not relevant.
        """,
        docs=[
            doc(
                4,
                "guide",
                "How to recaulk a bathtub like a pro",
                """
                New caulk over old never lasts. Plan for the old bead out, a day to dry,
                and a day to cure.

                1. **Remove the old caulk** with a plastic scraper or utility knife, then
                rub off the residue with a caulk remover or mineral spirits.
                2. **Clean and dry.** Wipe the joint with rubbing alcohol, kill any mould
                with diluted bleach, rinse and let it dry completely, ideally overnight.
                3. **Fill the tub with water.** The weight opens the joint as it will be
                in use, so the new bead does not tear the first time you bathe.
                4. **Tape both sides** of the joint with painter's tape, about 3 mm apart.
                5. **Apply 100% silicone** labelled for kitchens and baths in one steady
                bead, then smooth with a wet finger or a caulk tool.
                6. **Pull the tape** immediately, and let it cure for 24 hours before
                draining the tub or showering.
            """,
            ),
            doc(
                4,
                "forum",
                "Recaulked our tub this weekend: lessons learned",
                """
                Just finished recaulking a tub for the first time. What I wish I had known:
                getting the old silicone off took two hours, and a plastic razor blade plus
                caulk remover gel made it bearable. Let the joint dry overnight; mine
                still had water in it the first time and the new caulk would not stick.

                Tape on both sides makes it look professional. I filled the tub before
                caulking so it would not crack when someone stood in it, and waited a full
                day before draining. Use silicone, not acrylic, around a tub.
            """,
                extra={"replies": 21},
            ),
            doc(
                3,
                "guide",
                "Removing old silicone caulk: tools and tricks",
                """
                Score along both edges of the old bead with a utility knife, then pull it
                off in strips. Soften stubborn bits with a caulk remover gel for a few
                hours. Scrub off the last film with mineral spirits; new silicone will not
                bond to old silicone.
            """,
            ),
            doc(
                3,
                "faq",
                "Silicone or acrylic caulk for a bathtub?",
                """
                Use 100% silicone around a bathtub or shower. It stays flexible, handles
                constant water and resists mould if it says so on the tube. Acrylic latex
                caulk is easier to smooth and can be painted, but it shrinks and does not
                last in wet areas.
            """,
            ),
            doc(
                3,
                "blog",
                "The tape trick for a perfect caulk line",
                """
                Run painter's tape along the tub and the tile, leaving a small gap over the
                joint. Apply the silicone, smooth it with a wet finger and peel the tape
                away at an angle straight away. You get crisp, straight edges even on your
                first attempt.
            """,
            ),
            doc(
                2,
                "product",
                "TubSeal 100% silicone, white, mould resistant",
                """
                A kitchen and bath silicone sealant that stays flexible and resists mould
                for up to ten years. Shower-ready in 3 hours, full cure in 24.
            """,
                specs=[
                    ("Volume", "300 ml cartridge"),
                    ("Colour", "white"),
                    ("Price", "$7.98"),
                ],
                extra={"price": "$7.98", "rating": "4.4 / 5"},
            ),
            doc(
                2,
                "faq",
                "How long should caulk dry before showering?",
                """
                Most silicone sealants are touch-dry in under an hour but need 24 hours to
                cure fully. Some fast-cure products allow showering after three hours;
                check the label.

                Cold, humid bathrooms slow the cure, so leave the fan running and the door open.
                Acrylic caulks often need longer than silicone before they are waterproof.
            """,
            ),
            doc(
                1,
                "guide",
                "How to caulk windows to stop draughts",
                """
                Clean the gap between the window frame and the wall, apply an exterior
                grade caulk in a continuous bead, and smooth it. Caulk in dry weather above
                5 °C.

                On the inside, use a paintable acrylic caulk around trim, and fit self-adhesive
                foam strips where the opening sash meets the frame. A lit incense stick held
                near the frame on a windy day shows where the draughts are.
            """,
            ),
            doc(
                1,
                "guide",
                "Caulking a kitchen backsplash",
                """
                Leave the joint between the worktop and the backsplash open for flexible
                caulk, not grout. Tape, apply a thin bead of kitchen silicone and smooth.

                Use a colour that matches the grout or the worktop so the line disappears, and
                keep the bead thin: a fat bead collects grime. Wait a day before wiping the
                counter with water.
            """,
            ),
            doc(
                1,
                "forum",
                "Cracked grout between tub and tile: grout or caulk?",
                """
                The grout where my tiles meet the tub keeps cracking.

                Reply from tiler_tom: that joint moves, so it should be caulk, not grout.
                Rake the grout out and run a bead of silicone.

                Reply from diy_dave: same problem here, and silicone in that corner has held for
                four years. Match the colour to your grout and nobody notices.
            """,
                extra={"replies": 4},
                also={"106": 1},
            ),
            doc(
                0,
                "review",
                "Best freestanding bathtubs for small bathrooms",
                """
                A 150 cm freestanding tub can fit where you would expect a built-in. Look
                for double-ended designs and an acrylic shell to keep the weight down.

                Check that your floor can take the weight of a full tub and that the drain
                position matches. Slipper tubs with one raised end are comfortable for a long
                soak but need more length than a double-ended design.
            """,
            ),
            doc(
                0,
                "guide",
                "Bathtub refinishing: DIY kit or pro?",
                """
                Refinishing coats a worn tub with a new epoxy or urethane surface. DIY kits
                cost little but rarely last more than a few years; a professional finish
                can last ten.

                The key to any refinish is preparation: the old surface must be etched, repaired
                and spotless, and the bathroom ventilated while the coating cures. A refinished
                tub needs gentle cleaning, without abrasive powders.
            """,
            ),
            doc(
                0,
                "blog",
                "Caulking a wooden boat deck",
                """
                Traditional teak decks are caulked with a polysulphide compound between
                the planks. Rake out failing seams, prime them and fill proud, then sand
                flush.

                Work in dry weather and keep the deck shaded while the compound cures, which can
                take a week or more. Masking the planks either side saves hours of sanding
                later.
            """,
                site="example-boating.test",
            ),
            doc(
                0,
                "product",
                "Bath caddy tray, bamboo, extendable",
                """
                A bamboo tray that spans your bathtub to hold a book, a tablet and a cup of
                tea.

                Non-slip silicone grips hold it steady, and there is a slot for a wine glass and
                a phone stand. Wipe dry after use; the bamboo is sealed against splashes.
            """,
                specs=[("Width", "70–105 cm"), ("Price", "$34")],
                extra={"price": "$34"},
            ),
        ],
    ),
    topic(
        "113",
        "home",
        text="robot vacuum for pet hair",
        description="""
            The user has shedding pets and wants to buy a robot vacuum that copes well with
            pet hair.
        """,
        narrative="""
            A perfect document recommends or compares robot vacuums specifically for pet
            hair, covering what matters (rubber brush rolls that resist tangling, suction,
            bin size or a self-emptying base, filtration, obstacle avoidance for pet
            accidents) and names models. Reviews of one robot vacuum tested with pet hair
            are highly relevant or relevant. Robot vacuum buying guides without pets, or
            upright pet vacuums, are marginal. Pet grooming tools, or vacuuming other
            things, are not relevant.
        """,
        docs=[
            doc(
                4,
                "review",
                "Best robot vacuums for pet hair, tested with two huskies",
                """
                We ran each robot daily for two weeks in a home with two heavily shedding
                huskies and a cat.

                - **Tidybot P9**: rubber dual rollers never tangled; self-empty base held
                a month of fur. Best overall, $599.
                - **Orbit Clean Pet**: strongest suction on rugs and camera-based obstacle
                avoidance that steered around a fake pet mess every time. $749.
                - **Sweepster 3**: best budget option at $279, but the bristle brush needed
                detangling every few days and the bin filled daily.

                What matters for pets: rubber rollers instead of bristles, a big bin or a
                self-emptying dock, a sealed HEPA filter for dander, and obstacle
                avoidance if you have a puppy.
            """,
                extra={"published": "2025-01-27"},
            ),
            doc(
                4,
                "forum",
                "Which robot vacuum for a golden retriever household?",
                """
                Two goldens, hardwood and a couple of rugs. Is a robot vacuum worth it?

                Reply from furmom_kat: Yes. Get one with rubber rollers; bristle brushes
                turn into hair ropes. I have a Tidybot P9 with the self-empty base and it
                is the best thing I bought this year.

                Reply from techdad: Obstacle avoidance matters if your dogs ever have
                accidents. The Orbit Clean Pet has a camera and has never run through
                anything. Also check the filter: HEPA helps with allergies.
            """,
                extra={"replies": 64},
            ),
            doc(
                3,
                "review",
                "Tidybot P9 review: the fur-fighting robot",
                """
                In our pet hair test, the Tidybot P9 picked up 98% of dog hair from
                low-pile carpet, and its twin rubber rollers stayed tangle-free for a
                month. The self-empty base means you only touch the bin every few weeks.
                Navigation is good but it lacks camera obstacle avoidance.
            """,
                extra={"rating": "4.7 / 5"},
            ),
            doc(
                3,
                "guide",
                "What to look for in a robot vacuum if you have pets",
                """
                Choose rubber rollers over bristle brushes, since hair winds around
                bristles. A self-emptying base saves daily bin emptying. HEPA filtration
                traps dander. If your pet might have an accident, pick a robot with camera
                obstacle avoidance, or it may spread the mess around the house.
            """,
            ),
            doc(
                3,
                "review",
                "Orbit Clean Pet vs Tidybot P9",
                """
                Both are excellent on pet hair. The Orbit Clean Pet has stronger suction
                and camera obstacle avoidance; the Tidybot P9 is quieter and $150 cheaper.
                On deep carpet with a shedding dog, Orbit wins narrowly.
            """,
            ),
            doc(
                2,
                "product",
                "Sweepster 3 robot vacuum",
                """
                An affordable robot vacuum with 2,500 Pa suction, app control and up to
                120 minutes of run time. Suitable for hard floors and low-pile carpet.
            """,
                specs=[
                    ("Suction", "2,500 Pa"),
                    ("Bin", "0.45 L"),
                    ("Price", "$279"),
                ],
                extra={"price": "$279", "rating": "3.9 / 5"},
            ),
            doc(
                2,
                "faq",
                "How do I remove hair wrapped around my robot vacuum brush?",
                """
                Pop out the brush roll, cut along the groove with the tool or scissors
                provided, and pull the hair away. With pets, do this weekly, or consider
                replacing a bristle brush with a rubber roller if your model has one.
            """,
            ),
            doc(
                2,
                "blog",
                "Living with a robot vacuum and a nervous cat",
                """
                Our cat hated the robot at first. Running it while we were out, at the same
                time every day, helped. It now keeps the cat hair tumbleweeds down, though
                we still vacuum the sofa by hand.

                The bin fills surprisingly fast in spring, when the cat sheds most, and we empty
                it after every run. The side brush occasionally flicks the cat's toys under the
                sofa, which she does not appreciate.
            """,
            ),
            doc(
                1,
                "review",
                "Robot vacuum buying guide: navigation, mapping and apps",
                """
                Lidar navigation maps rooms quickly and works in the dark; camera systems
                are cheaper and better at recognising objects. Look for no-go zones and
                room-by-room cleaning in the app.

                Battery run time matters in bigger homes, though most robots return to the dock
                to recharge and then resume. Check the height too: a slim robot can reach under
                low sofas and beds.
            """,
            ),
            doc(
                1,
                "review",
                "Best upright vacuums for pet hair",
                """
                For deep cleaning rugs and stairs, an upright with a motorised pet tool
                still beats any robot. Look for anti-tangle brushes and a sealed system.

                Bagged models are better for allergy sufferers because the dust stays sealed
                when you empty them. A crevice tool and an upholstery brush are essential for
                dog beds and sofa cushions.
            """,
            ),
            doc(
                1,
                "faq",
                "Can a robot vacuum replace my regular vacuum?",
                """
                For daily upkeep on hard floors and low carpets, yes. You will still need a
                regular vacuum for stairs, upholstery and deep cleaning.

                Clutter is the biggest obstacle: cables, socks and toys stop a robot in its
                tracks, so a quick tidy before each run helps. Most people end up running the
                robot daily and a full vacuum once a week.
            """,
            ),
            doc(
                0,
                "product",
                "Self-cleaning slicker brush for dogs and cats",
                """
                A grooming brush that removes loose undercoat; press the button to retract
                the pins and wipe the hair away.
            """,
                specs=[("Suitable for", "medium and long coats"), ("Price", "$15.99")],
                extra={
                    "price": "$15.99",
                },
            ),
            doc(
                0,
                "guide",
                "How to vacuum a car interior",
                """
                Remove mats and shake them out, then vacuum from top to bottom with a
                crevice tool. A stiff brush loosens pet hair from carpets before you
                vacuum.

                A cordless handheld with a brush attachment is easiest for the seats and boot.
                Finish with the dashboard and doors using a soft brush to lift dust from vents.
            """,
                site="example-auto.test",
            ),
            doc(
                0,
                "news",
                "Robot lawn mowers become the norm in suburbs",
                """
                Sales of robotic lawn mowers have doubled in three years as prices fall
                and wire-free models using GPS reach the market.

                Owners like the quiet and the neat, constantly trimmed look, since the mowers
                cut a little every day. Retailers say theft protection, with PIN codes and GPS
                tracking, has reassured buyers.
            """,
                extra={"published": "2024-05-02"},
            ),
            doc(
                0,
                "blog",
                "Why do dogs shed more in spring?",
                """
                Dogs with double coats blow their undercoat in spring to prepare for
                summer. Brushing daily during moulting season keeps loose hair under
                control.

                A deshedding tool and a monthly bath during moulting season help, and a good
                diet keeps the coat healthy. Sudden bald patches or constant scratching are
                worth a trip to the vet.
            """,
            ),
        ],
    ),
    topic(
        "114",
        "garden",
        text="composting in an apartment",
        description="""
            The user lives in a flat without a garden and wants a practical way to compost
            kitchen scraps indoors or on a balcony.
        """,
        narrative="""
            A perfect document compares apartment-friendly methods (worm bin, bokashi,
            electric food recyclers, drop-off or collection schemes) and explains how to
            run one without smells or pests. A detailed guide to one indoor method is
            highly relevant. Shorter guides or product pages for indoor composters are
            relevant. Backyard composting, what can be composted in general, or reducing
            food waste are marginal. Compostable packaging claims or municipal landfill
            news are not relevant.
        """,
        docs=[
            doc(
                4,
                "guide",
                "Composting in a flat: four methods that really work",
                """
                No garden? You can still keep food scraps out of the bin.

                - **Worm bin (vermicomposting)**: a small box of red wigglers under the sink
                turns scraps into rich castings. Odourless if you do not overfeed.
                - **Bokashi**: an airtight bucket where scraps ferment with bran. Handles
                meat and dairy; bury or add the result to a worm bin or community compost.
                - **Electric food recycler**: dries and grinds scraps overnight into a
                soil amendment. Fast and tidy, but uses power and is not true compost.
                - **Drop-off or collection**: freeze scraps and take them to a community
                garden or market drop-off, or sign up for kerbside collection.

                Whatever you choose, keep a lidded caddy, balance wet scraps with shredded
                paper, and never let fruit sit uncovered, or fruit flies move in.
            """,
                also={"101": 1},
            ),
            doc(
                4,
                "forum",
                "Two years of worm composting in a studio apartment",
                """
                People are always surprised there is a worm bin under my desk. It does not
                smell. Setup: a two-tray plastic bin, shredded cardboard bedding, 500 g of
                red wigglers. I feed them about a litre of scraps a week, buried under the
                bedding, no citrus, onions or meat.

                Every three months I harvest castings for my balcony pots. Fruit flies came
                once when I left a banana peel on top; a layer of dry bedding fixed it.
                Before the worms I tried bokashi, which works but needs somewhere to put
                the result.
            """,
                extra={"replies": 33},
            ),
            doc(
                3,
                "guide",
                "Bokashi composting: a beginner's guide",
                """
                Bokashi is a fermentation method in an airtight bucket. Add scraps, sprinkle
                with bokashi bran, press down and close the lid. Drain the liquid every few
                days; diluted, it is a plant feed. After two weeks the fermented scraps go
                into soil or a compost heap, where they break down fast.
            """,
            ),
            doc(
                3,
                "guide",
                "How to start a worm bin indoors",
                """
                Drill air holes in a plastic tub, add moist shredded newspaper as bedding
                and a handful of soil, then add red wiggler worms. Feed small amounts of
                vegetable scraps, buried. Keep it between 15 and 25 °C and as damp as a
                wrung-out sponge.
            """,
            ),
            doc(
                3,
                "review",
                "Electric kitchen composters: are they worth it?",
                """
                Countertop food recyclers heat, dry and grind a day's scraps into a dry
                powder in a few hours. They are quiet and odour-free. The result is not
                finished compost but can be mixed into soil. Running costs are about 1 kWh
                per cycle.
            """,
            ),
            doc(
                2,
                "product",
                "BalconyBin 2-tier bokashi starter kit",
                """
                Two airtight buckets with taps and 2 kg of bokashi bran: enough for three
                months of kitchen scraps. Compact enough for a kitchen cupboard.
            """,
                specs=[
                    ("Capacity", "2 × 16 L"),
                    ("Includes", "bran, scoop, press"),
                    ("Price", "$69"),
                ],
                extra={"price": "$69", "rating": "4.4 / 5"},
            ),
            doc(
                2,
                "news",
                "City expands food scrap collection to apartment buildings",
                """
                Residents of apartment buildings can now request a food scrap bin, with
                weekly collection starting next month. The scraps will be composted at the
                city's facility.

                Building managers will receive a large shared container for the bin room, and
                residents will get a small kitchen caddy and compostable bags. Accepted items
                include fruit and vegetable scraps, meat, bones, coffee grounds and soiled
                paper.
            """,
                extra={"published": "2024-10-01"},
            ),
            doc(
                2,
                "faq",
                "Does an indoor compost bin smell?",
                """
                A well-run worm bin or bokashi bucket does not smell bad. Smells come from
                too much wet food, not enough bedding or a lid left open. Bokashi smells
                pickled when opened, which is normal.

                If a worm bin starts to smell, stop feeding for a week and mix in dry shredded
                cardboard. A rotten-egg smell in bokashi means air got in; press the scraps down
                firmly and keep the lid tight.
            """,
            ),
            doc(
                1,
                "guide",
                "Building a backyard compost heap",
                """
                Pick a shady spot on bare soil, mix greens (grass, scraps) and browns
                (leaves, cardboard) in roughly equal volumes, keep it damp and turn it
                every few weeks. Compost is ready in six months to a year.
            """,
            ),
            doc(
                1,
                "faq",
                "What can and can't go in compost?",
                """
                Fruit and vegetable scraps, coffee grounds, eggshells, leaves and cardboard
                can go in. Avoid meat, dairy, oily food, pet waste and diseased plants in a
                home heap.

                Tea bags can go in if they are plastic-free, and shredded newspaper is fine, but
                glossy magazine paper breaks down slowly. Chop larger scraps to speed things up.
            """,
            ),
            doc(
                1,
                "blog",
                "Ten ways to waste less food at home",
                """
                Plan meals, shop with a list, store food properly and cook leftovers into
                new meals. Freeze bread and ripe bananas before they go off.

                Check the fridge before you shop, move older items to the front, and learn the
                difference between use-by dates, which are about safety, and best-before dates,
                which are about quality.
            """,
            ),
            doc(
                0,
                "news",
                "Are 'compostable' cups really compostable?",
                """
                Many compostable cups need industrial composting facilities that few
                cities have. In landfill, they behave much like ordinary plastic.

                Labels such as 'plant-based' and 'biodegradable' are not the same as certified
                compostable, and consumers are often confused. Campaigners want clearer
                labelling and more investment in collection.
            """,
                extra={"published": "2023-09-12"},
            ),
            doc(
                0,
                "news",
                "Landfill expansion approved despite protests",
                """
                The regional council voted to expand the county landfill by 40 hectares,
                citing rising waste volumes.

                Residents living near the site raised concerns about traffic, odour and
                groundwater. The council said the expansion will give the county another fifteen
                years of capacity while recycling targets are pursued.
            """,
                extra={"published": "2024-02-29"},
            ),
            doc(
                0,
                "blog",
                "Small apartment living: ten storage hacks",
                """
                Use the backs of doors, under-bed boxes and wall-mounted shelves, and pick
                furniture that does double duty, such as an ottoman with storage.

                Mirrors and light colours make a small room feel larger, and a fold-down wall
                desk can disappear when you are not working. Go through cupboards every season
                and donate what you do not use.
            """,
            ),
        ],
    ),
    topic(
        "115",
        "home",
        text="paint kitchen cabinets without sanding",
        description="""
            The user wants to repaint their kitchen cabinets and hopes to skip sanding; they
            want a method that still gives a durable finish.
        """,
        narrative="""
            A perfect document gives a full no-sanding (or minimal-sanding) method:
            degreasing, a deglosser or liquid sander, a bonding primer, suitable cabinet
            paint, thin coats and curing time, with honest notes on durability. Documents
            that explain one key piece well (bonding primer, deglossing, which paint) are
            highly relevant or relevant. Painting cabinets with full sanding, or painting
            other furniture, is marginal. Replacing or refacing cabinets, and other
            kitchen projects, are not relevant.
        """,
        docs=[
            doc(
                4,
                "guide",
                "How to paint kitchen cabinets without sanding",
                """
                You can skip the sander, but not the preparation. Paint fails on cabinets
                because of grease and gloss, and both can be dealt with chemically.

                1. Remove doors and hardware, and label everything.
                2. **Degrease** with a TSP substitute or a degreasing cleaner; rinse.
                3. **Degloss** with a liquid deglosser on a lint-free cloth, and paint
                within the time on the label.
                4. **Prime** with a bonding primer made for glossy surfaces.
                5. **Paint** two thin coats of a urethane-modified alkyd or cabinet enamel,
                with a foam roller and a good brush.
                6. **Cure**: rehang after 48 hours, but treat gently for two to three weeks.

                Done this way the finish holds up well; a quick scuff with a sanding sponge
                on the most handled edges never hurts.
            """,
            ),
            doc(
                4,
                "forum",
                "Painted my oak cabinets with zero sanding, 2 years later",
                """
                Two years ago I painted our orange oak cabinets without sanding. Update:
                they still look great, with one chip near the bin.

                What I did: cleaned with a degreaser twice, wiped with liquid deglosser,
                then a shellac-based bonding primer (the grain still shows a little, I
                like it), then two coats of a self-levelling cabinet enamel. I waited a
                full week before putting the doors back on properly.

                The only place I regret skipping sanding is the sink base, where the old
                finish was damaged by water.
            """,
                extra={"replies": 29},
            ),
            doc(
                3,
                "faq",
                "What is a bonding primer and do I need one?",
                """
                A bonding primer is formulated to grip slick surfaces such as glossy
                paint, laminate, tile and glass. If you are not sanding, it is what makes
                the topcoat stick. Shellac-based and high-adhesion acrylic primers both
                work; let them dry fully before painting.
            """,
            ),
            doc(
                3,
                "guide",
                "Liquid sander vs sandpaper for cabinets",
                """
                A liquid sander, or deglosser, chemically dulls a glossy finish so primer
                can grip. It is faster and dust-free, but it is not a cleaner: degrease
                first. Sandpaper also levels drips and damage, so use it where the old
                finish is chipped.
            """,
            ),
            doc(
                3,
                "review",
                "Best paints for kitchen cabinets",
                """
                Urethane-modified alkyd enamels, which clean up with water, give the
                hardest, most level finish and top our tests. Traditional oil paint is
                tough but yellows. Standard wall paint stays soft and marks easily on
                cabinets.
            """,
            ),
            doc(
                2,
                "product",
                "GripCoat bonding primer, 1 qt",
                """
                A high-adhesion, water-based primer that bonds to glossy paint, laminate
                and tile without sanding. Recoat in 1 hour.
            """,
                specs=[
                    ("Coverage", "about 9 m² per quart"),
                    ("Base", "water-based acrylic"),
                    ("Price", "$24.98"),
                ],
                extra={"price": "$24.98", "rating": "4.5 / 5"},
            ),
            doc(
                2,
                "blog",
                "Chalk paint on kitchen cabinets: my honest review",
                """
                Chalk paint sticks without sanding and is easy for beginners, but it needs
                a wax or polyurethane topcoat to survive in a kitchen. Mine looked great
                for a year, then wore through on the door edges.
            """,
            ),
            doc(
                2,
                "faq",
                "How long does cabinet paint take to cure?",
                """
                Most cabinet paints are dry to the touch in hours, but they take two to
                four weeks to cure to full hardness. Handle doors gently and avoid
                cleaning them with anything abrasive during that time.
            """,
            ),
            doc(
                1,
                "guide",
                "Painting kitchen cabinets: the traditional method",
                """
                Clean the cabinets, sand everything with 120 then 220 grit, vacuum and tack
                off the dust, prime, and finish with two coats of enamel, sanding lightly
                between coats.

                Sanding gives the best adhesion and lets you smooth out old drips and dents, but
                it is slow and dusty. Spray-painting the doors gives the smoothest finish if you
                have the space and equipment.
            """,
            ),
            doc(
                1,
                "blog",
                "Upcycling a dresser with paint",
                """
                A tired dresser can become a statement piece with a bold colour and new
                knobs. Clean it, prime it and paint in thin coats, and seal the top with a
                water-based polyurethane.

                For a worn, vintage look, sand the edges lightly after the paint has dried to
                let the wood show through. Replace drawer runners or rub candle wax on wooden
                ones so drawers glide again.
            """,
            ),
            doc(
                1,
                "guide",
                "Choosing the right paint finish",
                """
                Flat hides imperfections but marks easily; eggshell and satin suit walls;
                semi-gloss and gloss are tough and washable for trim and doors.

                In bathrooms and kitchens, a satin or semi-gloss finish resists moisture and
                wipes clean. Ceilings are usually flat, to hide imperfections and reduce glare.
            """,
            ),
            doc(
                0,
                "review",
                "Cabinet refacing vs replacing: costs compared",
                """
                Refacing keeps the cabinet boxes and replaces doors and veneers, for about
                half the cost of new cabinets. Replacing lets you change the layout.

                Refacing usually takes a few days and the kitchen stays usable, while a full
                replacement can take weeks. If the boxes are water-damaged or the layout does
                not work, replacement is the better investment.
            """,
            ),
            doc(
                0,
                "guide",
                "How to install a kitchen backsplash",
                """
                Plan the layout from the centre, spread thinset with a notched trowel, set
                the tiles with spacers, grout after 24 hours and seal.

                Turn off power to outlets on the wall and use box extenders so the covers sit
                flush over the tile. Leave a small gap at the worktop and fill it with flexible
                caulk rather than grout.
            """,
            ),
            doc(
                0,
                "product",
                "Soft-close hinges for kitchen cabinets, 10 pack",
                """
                Replace noisy hinges with hydraulic soft-close ones. Fits standard 35 mm
                cup holes.

                Three-way adjustment lets you line up doors perfectly after fitting. Overlay and
                inset versions available; check which your cabinets use before ordering.
            """,
                specs=[("Cup", "35 mm"), ("Price", "$21.99")],
                extra={"price": "$21.99"},
            ),
        ],
    ),
]
