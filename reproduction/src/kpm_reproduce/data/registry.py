"""The pinned public source files of the benchmark data, with their SHA-256 hashes.

Every source is a file of a public GitHub repository at a full commit hash, so its address
``BASE_URL + OWNER/REPO/COMMIT/PATH`` always serves the same bytes; the hash is checked on
every download. The hashes were computed from the git blobs of those commits (the bytes
``raw.githubusercontent.com`` serves). Where each file comes from, and why it is taken as a
copy of Rätsch's or UCI's data, is told in :mod:`kpm_reproduce.data.convert`.

Sources
-------
* Rätsch's IDA benchmark repository (Rätsch, Onoda & Müller 2001), published realizations
  1-10 as ``NAME_{train,test}_{data,labels}_R.asc``: banana, breast_cancer, german, image,
  titanic and waveform from fernando2393/Relevance-Vector-Machine; heart and ringnorm from
  povelfk/AdvML19-Project-RVM.
* UCI originals of the reconstructed sets (Dua & Graff, UCI Machine Learning Repository):
  Pima Indians Diabetes (darenr/public_datasets), Solar Flare, second file
  (Abhishek-Deshmukh/cs460-perceptron-comparison), splice junctions
  (seacevedo/SpliceJunctionPrediction), new-thyroid (amritmaj/SVM-Tree).
* Devn913/AGMR_entropy_sparse, ``twin_datasets/``: a copy of Rätsch's thyroid (its feature
  scaling) and the 7400-case twonorm sample (Breiman 1996).
* The USPS digits as ``usps.h5`` (the widely circulated HDF5 copy of the ESL ``zip.train`` /
  ``zip.test`` split), from niuers/Learning-From-Data-A-Short-Course.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BASE_URL", "SourceFile", "SOURCES", "DATASETS", "source_files"]

#: Where the pinned files are served: ``BASE_URL + SourceFile.key``.
BASE_URL = "https://raw.githubusercontent.com/"


@dataclass(frozen=True)
class SourceFile:
    """One pinned source file.

    Attributes
    ----------
    repo : str
        ``OWNER/NAME`` of the public GitHub repository.
    commit : str
        Full (40 hex digits) commit hash.
    path : str
        Path of the file inside the repository.
    sha256 : str
        SHA-256 of the file's bytes.
    """

    repo: str
    commit: str
    path: str
    sha256: str

    @property
    def key(self) -> str:
        """``OWNER/REPO/COMMIT/PATH``: the address below :data:`BASE_URL` and the cache path."""
        return f"{self.repo}/{self.commit}/{self.path}"

    def url(self, base_url: str = BASE_URL) -> str:
        """The file's address below ``base_url``."""
        return base_url.rstrip("/") + "/" + self.key


def _ida(repo, commit, stem, hashes):
    """The 40 files of 10 published IDA realizations, by role ``{train,test}_{data,labels}_R``."""
    return {role: SourceFile(repo, commit, f"{stem}_{role}.asc", sha)
            for role, sha in hashes.items()}


_DEVN913 = ("Devn913/AGMR_entropy_sparse", "d2acc13cba3e83de7a38086d30bc9223b92965bc")

#: The source files of each data set (13 Rätsch sets and ``"usps"``), by role.
SOURCES = {
    "banana": _ida(
        "fernando2393/Relevance-Vector-Machine", "4692830b9a8cf938e6b319be4a42e2a3ddde5457",
        "Classification/datasets/banana/banana",
        {
            "train_data_1": "d9ae475e6aa77ef0faa1fdad1d9f476756cb466445a3e65c760988d8a45c1753",
            "train_data_2": "7dc9394526a65658f138d5eb8c58734d009c10c6494a6b6dc9e7a4503ab57d13",
            "train_data_3": "c1d12105ec229eb956b4d8d0df494e15a29a4177148eafe85ea93cfc3f575cfa",
            "train_data_4": "858b4b81d2b1ea048e092b3fb0a2617ec8a681ecfd4537a56fb346ad8b573e6e",
            "train_data_5": "321ea025120ee7f45d1b279aaf2bf2fb9cf39cc8ad31a5c6fe0f92a6846f1171",
            "train_data_6": "e5c926d36f21829e9781130bf25c32e9333837b0d4d061fec234288e56977f68",
            "train_data_7": "095f0d568169d6c6a319f354025bf19cd3fb8e276e6a319cfb414634cfb45032",
            "train_data_8": "404128bd5765c89673643d7f3b78385e0ea82d1030bc7768de42eae0f0064724",
            "train_data_9": "52086a294e21bb1cb960b36673a1f62518a0725f2b98c53f100e496c0eebf390",
            "train_data_10": "0d2ba59a047830f9d7377a89ae63fd73f1d16b0ee459535716b0834e7ae1c101",
            "train_labels_1": "d009b24035b8af68f2683a27b9e14abe20c6b0984d3647f5168ec0d5843d2f65",
            "train_labels_2": "3cbcd4e9c609314c30902a8147c1b40c5f02587f178ebeeb7892f897f1779e06",
            "train_labels_3": "f27cfb78f220206540f68158c7999b83e4fe1145696c79767624fbd1dea742c4",
            "train_labels_4": "99f48475fb9532dd8299ab25d0dc417d6a9e0c139ea4210d32683023d80cbc75",
            "train_labels_5": "56d3246a4b917aa2b53d7b7caa562b58a79c5deb895fe6de61b63a626cb81c40",
            "train_labels_6": "1581b11ed49df4fa584a6df342bab1b2683b394f81f32f2456b7c6de72de4bf1",
            "train_labels_7": "311abc8acf88c4865169836413d1252c7da7fd9084bb0e21ef60c9d509c146c0",
            "train_labels_8": "8996054287202bf0c9256e274c5d0d856839f6008a722e887aa9a6faea9bf7bc",
            "train_labels_9": "2b2ee29c4b57cb962731d5a6e8cafbdc47f40215f6cf631731ecede623b3836d",
            "train_labels_10": "86f4b2847205c93c87c8c16b1d28dcdc0e018944e4dc561b71497677f34eba57",
            "test_data_1": "e9979e1ffeb52f3a4c541eca4f2967ab2dee22e768e775229d954ee725acfdf5",
            "test_data_2": "df1d99cc572c474b42400337fad35db3e6440508f3be24df435cfa590dc8186b",
            "test_data_3": "e5911eaf2bb78391c9af5fca3c7f5a2972c5e0cbf19da39d298f4d36d4e8805a",
            "test_data_4": "cb5777ba76ed76f082064749eecd1dcd99942a036cf276c20f0e78b109b73a06",
            "test_data_5": "7b6b01a7c8af3d14912df38aecb602a3d253ba8c28418868596286033564c728",
            "test_data_6": "1514d26a64c1a78b5f395e991d6fa53516c06d5c95ec8c11026e8bade364b4ce",
            "test_data_7": "86f489bf7622fd93f5ba1add6ab882ebd712e897ff538de504fb4553cfe189b9",
            "test_data_8": "c9e91333b92d87f004c2834a05c193a512264f229dcd6b7f041c7d93c494187e",
            "test_data_9": "7c230283d1903d969a8276b178eb38d5d12bd7693228d8ae6e7ff47350f197ab",
            "test_data_10": "a4602933093be82bafea8d4d6122ca052db61bcc0c6486eb5c367550533a5183",
            "test_labels_1": "979ec19fc7f08a2e91f6f6d449362f83b07031c0d44a0e4c640b03ee73659e77",
            "test_labels_2": "cadac2b8e56775903bdfc41cea16c9b1100f30481186451f0ef2cc05abc8dfa9",
            "test_labels_3": "5025bcf145c89087d45e993a52e2ac2164510ba69c794b6eed71da75c0b6758b",
            "test_labels_4": "643d5197be3eaef5ded46a2012ad919fab64ecb5cf71a495b5d03509af3a0512",
            "test_labels_5": "8053fd925425fd2910f44c70e069d8061d64ba365c7b49d85249feedac3baf18",
            "test_labels_6": "e64f3e9d69d0dff1c2978d582bdb614e9bb886492be83ded8e468ce43cc0cab2",
            "test_labels_7": "81498af27c93554daa76d4692528e8944f2f30906dc251456ab5bf4243d52b2c",
            "test_labels_8": "7b5f1398d72f6e40fdf7a86fb6e50df54252a3ccb31333e6738bb5723246c6dc",
            "test_labels_9": "bfd02b92d3eae3ca318143d0e73bea32051b20ff66e439034184c3947eef5c27",
            "test_labels_10": "a497365bd66c5d70de7ab144a3adb72a21697515197040f211440204b9045df2",
        }),
    "breast_cancer": _ida(
        "fernando2393/Relevance-Vector-Machine", "4692830b9a8cf938e6b319be4a42e2a3ddde5457",
        "Classification/datasets/breast-cancer/breast-cancer",
        {
            "train_data_1": "eb844ea5b35510867eba788ff89fa76e653453f80b5dd19852a6ea5d2c615ab0",
            "train_data_2": "b99561e4472f3bb429d6329723d224ba07d30920175b0f7ac8e015e801523031",
            "train_data_3": "9e531f83b113897804e20184691ddc94849fab1f1bb981e13f15f1cbab112cec",
            "train_data_4": "d5fbe60fa284d52460dbfdaf8e3798457ae720a1959cd6bd64c1a5cd69dd678e",
            "train_data_5": "291a218f4558933d729b26c620ee079d1ed20e9b586165b7d70076ce9c867a7f",
            "train_data_6": "9936bf97cffdc62e9187b93493bd37fc5ea638bf578937f6705c39ffd7174eb7",
            "train_data_7": "abd31c191d7e32762740fa6dea8c9c5a7ea353f63a4841922cc9fea19a2c7d89",
            "train_data_8": "340858e9f5f6713bb8f78f143dcd3a3488f2fd0c8138b3bcf952d7b1ba49a6e9",
            "train_data_9": "c3c18c22f93b6adc465e5ae54e919a49ad98c7f3e0bd1b8c99f9149fa7c666d3",
            "train_data_10": "f9fbdf94a78ad5894bd2ca2c1652f6791e9e89741798335353063406ccfe1952",
            "train_labels_1": "ea51fb4852be799e7d95d67156bacf6f4e713b2294c783ba9e871bde34e6047e",
            "train_labels_2": "55320beed4f8bb6bdac900f93bfb58b3bf04f530c6e00478a4a62bec94e9955f",
            "train_labels_3": "366402dfe1b88f47391165682420243070ce12f5005c6723d58f6ba5af8da13a",
            "train_labels_4": "40896615ab71285ed0dd438ff2a8b8868fea8074acafdb0f429df896b5991d55",
            "train_labels_5": "ea6d37e9dcff495938b97f640b11ecf42ae8db1fbe71969245a91b3587f32732",
            "train_labels_6": "e3a4941b9d30c3c7ef54b6e8ba366354a84b5ff17c8e584f6f9a09e0e9c1ad36",
            "train_labels_7": "468ac3a8bb4bf20c87d95a5853132b840388725bd2998ea7e86ddf0e644607ad",
            "train_labels_8": "8cb977b6e86a794955eae4f5fd693a5b41d2b59575484d7f6e4f894048eca202",
            "train_labels_9": "d7fd7ba11de746ae60dd082e220d1be8a244b7961321c7068f8a9aee673a90b4",
            "train_labels_10": "acffe4207d7a32e5f85546d4fe51d1caddaedccb623adc7821396cbc9192cf8c",
            "test_data_1": "678602680c62cd14a2bc10c0f729b2882105f3641a5473c48daaeb05e6109d9f",
            "test_data_2": "4137b819c763eda2f5a1445bc47207fd5d1d9c5e2062cdcd4ed6e122c7d7060e",
            "test_data_3": "bfa43b84d461115f79c2d48c212b05b16e249c27d4f3ab1a96f054db0c271caa",
            "test_data_4": "7b91d7c5eb4c18c060e8265a7e1bcce2694bac2625c6a6a0f55c8cd4e0537c97",
            "test_data_5": "aaac24b438c713b6305de1ca91e8830ba28ea510f75c94c131f9701f7a7db5b4",
            "test_data_6": "39f7f4b11bae3f99637b8d3505f17fa6497b87d89484f7fd087f51021cab30d9",
            "test_data_7": "d248e3b008a9ad53d88741622c5fe491a707cf7381160e952c3d5d4c4a6b415b",
            "test_data_8": "30a7feb57d94c803c9789c63c39fda854b67cbe6c27a483a4e674cbff7113e94",
            "test_data_9": "fb2da6c1ec4ad789d0a9acd83466e521b0d930f6eb36be6e27cd432a1c48a134",
            "test_data_10": "790ed6b862e033c7ac59610b5fce06e1c0ec442127036d2c31a5cf4b06637adf",
            "test_labels_1": "c05c38b8384d06ffea004efd1eb9567682fd42168179a75cad0def970bbeabba",
            "test_labels_2": "c53fbb03d1ac6f7d6802de336bf83ba11a0e3fed60de6963d33e35b94c5563ae",
            "test_labels_3": "d363b68f7ac5c1b6911e14e9f3da47b9a691aac2777b1c479d0119c60dba175f",
            "test_labels_4": "04a553beafa1ef9c73760987841673259a0bd21623fb98593a52c099b5cf6649",
            "test_labels_5": "5970f9a771e658145c8e739a053bf00869d568051bb57fa303a4c5cad4096a19",
            "test_labels_6": "96f891db1386888d9f411950404db51ed01d9442cd4bf708b3273092c57e6d69",
            "test_labels_7": "15e3e26960fc925318f0ac1dddf9eaaf9cc6c06f106ea887ba21c0e2326c4e21",
            "test_labels_8": "cd56cf22cdfccb2bdbc54d9c64bdfd51a4c620c339e1fe72eed9d111fa8e69e8",
            "test_labels_9": "05f870b19659190fb006140855e3f54799852df03b3d18ac826977d5ca73ba10",
            "test_labels_10": "bb694ad3b681588a5d939df10c513ff49e49157184e840645daa46a88e0fb6ad",
        }),
    "german": _ida(
        "fernando2393/Relevance-Vector-Machine", "4692830b9a8cf938e6b319be4a42e2a3ddde5457",
        "Classification/datasets/german/german",
        {
            "train_data_1": "f1ec4bd3c2be2b4c2f82269a6e682ebf4e4b8a30035bfeb2346b23987a50e6c1",
            "train_data_2": "936f9815f70300da4437a1de698f936bc62d0455ed8885acb322693aa006977b",
            "train_data_3": "83a46faee153e5801e17a289a34d5c56570baaf0f5f14a4a3b40fd311778a910",
            "train_data_4": "a95dbc0c073b415b3977a78c70e33505a0ec81ec67aa8a161627966e311cb30f",
            "train_data_5": "b1e5e0a0736806a196c0ecc037b7a529e0c27cfdfa190453e43efee41de698eb",
            "train_data_6": "25edd6f96c23ddd9f498e8114c38de6b18756080931466ccd146f98baa5d038c",
            "train_data_7": "57400b426bce8e1a3354f0d66c149e2fc3ec35201bc245f61fce088c702349bc",
            "train_data_8": "8f0fd713791b7a6e68ace52d25398932f1714f1a4a51e79c9bfde8d4c24ad52b",
            "train_data_9": "ef6e1ea57f633422d6c10c27bb068cd812adfce3a60c63b41a346031cb130825",
            "train_data_10": "3afcf59d6f354dc8fb3a86ef94f9d411a971afbb6a347840be91901ce74631ae",
            "train_labels_1": "40a2b2bed596b77d728f5969cd828b2d28b3bbec0adaf4f91ba2754a04124c28",
            "train_labels_2": "a969fc7a93aa5f5bd8f4aca0182b79b2eb3b8e22efbc68e908f7f6cd13dcb74d",
            "train_labels_3": "ff1855e667584210fee7af9cc6c3445bc3ebbcf886c1f30ec904e77ed60c4990",
            "train_labels_4": "6af8d122ec99cb3a965056d1e4a5d9bf013225a0b259d4ffd7c4df4ae94ce0be",
            "train_labels_5": "733675064e5d30afd0a9a594196c3ba7a13c496f78eaf3e099a87867af5fd663",
            "train_labels_6": "dd75a41c364005c95f3b7ed8482139dee8727b9efce0f3164f12b4c33574e43f",
            "train_labels_7": "43e36efddda7ba7cf3dc389daceb22698c1e1d0099267597c86d54664c1964bc",
            "train_labels_8": "d9bda8233ec5b3dfe0d32dbf05aa29e91a59fafa48ec62eca6fca95cca3dfa7a",
            "train_labels_9": "807e377bd8294a65d7dc42d8dc9e8e61994099ae7c230666e074bedb029c8733",
            "train_labels_10": "687c659f4328df69c3ac6bd29add5a4c6dd750c3959d802097337a465a41919c",
            "test_data_1": "210595e068a16bf5770fb05756428484f5ac45c77e9365d160cbc412dab17c77",
            "test_data_2": "a115c365294f927fdd1ef40c2673a9f1dd7c7ff9383feb32f3563187b6968669",
            "test_data_3": "a13290815ac50c5ac7a04bd06b40863e3701ff07f0e7d05c5d9e2331924006cd",
            "test_data_4": "a741a887f9f7761fdbbabd4d11158ae6dcc50c37b234f2ddc142cc7ea5baf292",
            "test_data_5": "65eaef7d5b8cb2cdfd8ac1dae36089fa14ea562c1fb8f873f95ba0bcc70d1261",
            "test_data_6": "5a3eec5e2a5908834fc44f4f6c4c4f1132c449c49c1dd7f3a20ea5581e52fe87",
            "test_data_7": "4ad2c60cbd0ce555ebde0b272021b215780ada8f3817ee7a605671340806b24c",
            "test_data_8": "587b2059eefdc1ccf6b853c7d83e78e42fd88b2808d5c92d601b782902282915",
            "test_data_9": "4e4bf7c3c99ee0f58e594a4e21c6a69b2e6804b544b3e20380613e715bbbf086",
            "test_data_10": "f398b66b7581b41f89fc191a0cc8914652fc951107f328c214d7dce2fa6ef32b",
            "test_labels_1": "6e8cc451afccc692660d8fa8e5984b51c05cb63cd81bd5eb373064ec36ed4935",
            "test_labels_2": "9560ca0950d645f5c0ee611904c3231599ecfbd09e05b49f6015aac2599474e4",
            "test_labels_3": "15c502ab721c4a02dcad9b419398a35fe36e4d852628ac85872a64ca8b2c3975",
            "test_labels_4": "547f88fd9fbae840c4af73693d4fc6bc5f9ec5d848058f053228caff1b012a93",
            "test_labels_5": "66c0575318510bae4a588bbbe3fdb5fd42f998fa00ee6f1f6e828ca8d761c4d0",
            "test_labels_6": "fbdedb771b4a62ede367854b7d6f25ba1f7484e43b5a85db6afd9e712c4b360f",
            "test_labels_7": "b85bc5476cc01f9f877c76408bda9ca9dad57d559b9a094ed030b2bc5a7922a9",
            "test_labels_8": "e2ef3075bf78991954905b9637875863302f7be0f71582d6d34c136410e46371",
            "test_labels_9": "85c3edc1168efa52361c263bdda16ce7af0fec8709098b0e6b394817616f153a",
            "test_labels_10": "b2dae994194eb2d4b4ddf6eefd1b835ffd756dc78496ef24bf7abfc4ae242ad5",
        }),
    "heart": _ida(
        "povelfk/AdvML19-Project-RVM", "fe15c4dc66753005760c5286ec295f1c2afec61c",
        "data/heart/heart",
        {
            "train_data_1": "be5c6eb98aad867fa48cd4b82c8660026407a4cb840776812cf085242905aa63",
            "train_data_2": "2d67057953125ddce113ec433f4dbd5e1a057d1a3498bdb6f7025d265eb27f21",
            "train_data_3": "46a7958c77d0cf59afa744c47799bc00b94a30d14940bf627b4b9836a2fb0287",
            "train_data_4": "dfe50ac1bf9282f56c5eb5469b476f4944ef93a3221fc91f8e68715c67f45d2f",
            "train_data_5": "edddfc34f663406871e875fbd26847bbe7ed72132eb58124addc938be3def6c3",
            "train_data_6": "52866fcc6d72ada59d970863ac47dd6de7aa3674504b8d05eaf4cd34d143726c",
            "train_data_7": "7cd79ddb162b79a329b39c62952a3e3fdb6ee962963b26292d5b20695bdc40db",
            "train_data_8": "2bdbce5ba81cd3f7c7aa9c08affd1b61801adce52ed89c9b18e7f07a7ff7ffff",
            "train_data_9": "68fc66f54dc1fb5fcc9937735119eb1dc1047ab21b9734d4e0b4e86f42682bfa",
            "train_data_10": "28659da6e7ebf01ad5b951494dec24d9d5be6848ba75caefab420aad9be9f1bd",
            "train_labels_1": "3f4e48c68b68d299b373f5f2f24cf89de5c23be0ca73b2d0c8cfb7583e0a88c3",
            "train_labels_2": "2589d99a42b0c0f7fb0e63dd3dd1a04cb86740fc38162e8dad89d290f2f70b23",
            "train_labels_3": "84d9e6ff0063c4314e8a6c0bfe5e6c41d59a026865145ccd939c7693df669219",
            "train_labels_4": "762b191c85bc4b66c4893f9f086f103e3cfde055230486593999ea47cc845412",
            "train_labels_5": "5f0603d98c678d985558bd965a9cae0eaa43b432f70ddeb661ffe71348e59da7",
            "train_labels_6": "090a296f1573e09ffa69e8c7f25d1b1b22cd28e538b8167b1575279635837361",
            "train_labels_7": "229ef0ef19647a1f0dfa7b6464346d30bfaca496caec33f0e6939adee3f5454f",
            "train_labels_8": "3ac40c29edb6dfa740429448f2641fda36a7b3f6f18a3f2a191d710eaee029e5",
            "train_labels_9": "e33b94bad56e2db6e155bc03630596e806573636f582afa6e3f14263375179cf",
            "train_labels_10": "6eb70e747114bd0120d64b76261c40d277b0a240b498b79ae3e6b3ddb3b549b0",
            "test_data_1": "15308ae03768edc6092c45881b992e023b373596c5757435f0bdec5c74308efc",
            "test_data_2": "8a978e33293001a603955d7a29c8f20badbf2d5a7f64690d9a2c0f7b87a30bb4",
            "test_data_3": "db8a54f7d51a36d78a2f444e72b9f3ef9b3db269f8cd37ea2d70142dce91bfe4",
            "test_data_4": "eb0808f9ea7a14668c719650b3859734d057a326a7378c3e353a6a6db309d5f6",
            "test_data_5": "273817a59aa043f7468a97dceaf3df07ca617052e50b43c61ba8bc4274f25f5d",
            "test_data_6": "f7476df9abb27b0306f09d0427365ab4c4047e406c8304f93ce61ca30d43e5f6",
            "test_data_7": "f66e428466afaebadeb58b27df59cdbed270f3d79a174e9d0e9b0bfbd0df868d",
            "test_data_8": "9933636acbbc08d93019aef61c9cfce330036cb985cc5ad8ed8c16324cd47918",
            "test_data_9": "6d53362752e4b72cb2d0bbba7cbf07de8fb3ace72b90f650b909e1184be7aea3",
            "test_data_10": "0a071cbfddb4d96889caec854628a6befbb01e584e0c007397fb5ad20b481761",
            "test_labels_1": "31e4fcb98d70493de7cb90e33c51686fd1b4db561acb22cc2e896d4caf96581a",
            "test_labels_2": "e78d7342bf0724aee00b91c311260a36db71139a438da668a8a1622d117421ff",
            "test_labels_3": "26d1901e834e1a341fa3e8debb1eca0a14976b93f3b89830358f3b2f03fd2f2b",
            "test_labels_4": "5f86ba5541372aa9e4d4fa24b65354ae0d2c6475b6380a02831485d3341e8461",
            "test_labels_5": "bf0cf8619e0e2a5476983b36a99db0072f49ecb694b7d163b3ec75a3e8d1a785",
            "test_labels_6": "64f36550fa8e00744ceff3e783ff3e345598bc5ebdd9cede3cb09df85b2a3de4",
            "test_labels_7": "3c77b645911157704bb98c39e35432e574cd05e60aa7b97aa452be233b2de0c9",
            "test_labels_8": "131bfb0fe7a7864edf28f58c3e7d216013e1c2d301447ac736d1163d2c42243b",
            "test_labels_9": "a80690d9954e65bbf0a2b17c034f399cfbec1be4dc61e5c6ffdaa2d956983044",
            "test_labels_10": "14a6c82d1bccc4dfb99dfde4c2886e444f4a00b7153004d19c4a4a1e552d5b8b",
        }),
    "image": _ida(
        "fernando2393/Relevance-Vector-Machine", "4692830b9a8cf938e6b319be4a42e2a3ddde5457",
        "Classification/datasets/image/image",
        {
            "train_data_1": "e0a6caa0007001054a6d5667eea667dcf4cb20db30779c6e10eb3485e404dc6b",
            "train_data_2": "0fa7a22e8e1aab0306fa3931779581140798f45be27c58dee0bff404281fa06b",
            "train_data_3": "d18e18eea49578ecac842dc25dcdc4e213eb21e966149da7200f24c6e76291ef",
            "train_data_4": "6ea0013a8eab9b1888170fb52741c82fcbbee7577f023539b0291dad85cbc190",
            "train_data_5": "316075e24eddee644cf6c4d89135bda7ff4578b3de4ca25ec55ae3bed03d7904",
            "train_data_6": "03b7df505e0966fcc270e3a4307d8fe4513447fc9255ecb88d3b92863e601773",
            "train_data_7": "3cc028a75823a546683b242e3095fdfa4554c340965a98ab3edf0655d3106f41",
            "train_data_8": "097cea5e481ea7bb356509a5f9a2d5b06a33ceebaef7747b2f356fa796504a97",
            "train_data_9": "1b611381905fdadafb904ce5352e6cce6424cf343bf2e66a0e2f5252f920a1ca",
            "train_data_10": "e0a6caa0007001054a6d5667eea667dcf4cb20db30779c6e10eb3485e404dc6b",
            "train_labels_1": "78f067b53e54345d44812e342c4ac643ccde10165c444280a7b6c17dc4d8c524",
            "train_labels_2": "53ae082e2b4f71ec8a956f6574e20da4d31f4a38fd3504011031e7e99a1a01f4",
            "train_labels_3": "6a078061a0c967c24773e48397fad292fc5382127b74240b7b33c586cc34b918",
            "train_labels_4": "e60a5566bb7bac736b9a71a28d465381caa84af297ce86544c199360905a5285",
            "train_labels_5": "a72ad3c4c7c7a20c68ce31e8e25b136a2d6fbfbc954c5cb9af77a707efcec202",
            "train_labels_6": "79230f0ab8329a260cee59a1dee83885e96033c30a904a7d82cfe2bab29d6fc8",
            "train_labels_7": "c26d8407c58f2cbd94354db86127a54de93ae8f6c1b13f5c9665f10858fb03f4",
            "train_labels_8": "704e2b995228b1b76ca15f0f6b2f0ba9822918b665ff485c252e87f25a343c76",
            "train_labels_9": "09079f0c0776e5edc2f637765b4d5b82f62255d1b40759709add810060f5846d",
            "train_labels_10": "78f067b53e54345d44812e342c4ac643ccde10165c444280a7b6c17dc4d8c524",
            "test_data_1": "76171a102e464ad922230ca128782433402406e579d905bd2056bff544a2770a",
            "test_data_2": "d945c17d49a3c1b192ffbfacd12cc8d18365fcc476c1afb13d2ed58744a58571",
            "test_data_3": "47f7b6c7b03408139ef01271f453bf5fcd354a1c2a02f0ceeeb40a55326cd414",
            "test_data_4": "1931c001c797c3c993ff0afe12fde4a16f65062947a07f48eaf70fc47184bd4c",
            "test_data_5": "9770c0a79cda265a6d168b92a07eedd8bd6e31c1ab593eb747c20a9bf4bd55ef",
            "test_data_6": "3e50c5493e3d69af939349fca9ffe4d01b5c1410346833d5b1cc02b44f138cb8",
            "test_data_7": "42f16385a7a20a34f8f2d123879db06066b9c4d7d2fa66b554b0a2f3c2caa949",
            "test_data_8": "7b85ec82a3163dc223e1ecbffa06e5894155c1ff349e4ce81186a8f62d2209b4",
            "test_data_9": "ed0b3b3520ebf8b0caca41b5d25dcd86904bf76d144852d33ad6fbb8644298d6",
            "test_data_10": "76171a102e464ad922230ca128782433402406e579d905bd2056bff544a2770a",
            "test_labels_1": "a1f5bd81184edf83858fb309c76f2bde24485a72eb4d62f2809758d7b38c746f",
            "test_labels_2": "d4095f1a8eba234365105f794f7525602b1d461ddfca2fdefe089de942966093",
            "test_labels_3": "a00bb34b4f3a13c0aef4cd6963a31021c63cbddc9a0f04d5d90cfa2fbf48b6de",
            "test_labels_4": "87fc7b74bed48bea6888e1bb00697968bfccc5a092d47390cf227b22f616b094",
            "test_labels_5": "487fc7ddd7382d34425854c492cf765152e93823991ef89bb6f987c2af0bb711",
            "test_labels_6": "eca685755c4c42666678506cd5d4aa5a27c2b3d9c303c3283f97b4e4e0e67f0f",
            "test_labels_7": "bb059a722517db612684c51493222cd29087e1388da6a1af3bb7e41f82f48c96",
            "test_labels_8": "b7adc5bb8fef5daae2f3538260a3ecf180554c4f33fe9b928b5faa4f1d2682c6",
            "test_labels_9": "9ea13c78e6c37ad0498ec016d1aabd7e79cbba89068d47bff6663d4165aa51d3",
            "test_labels_10": "a1f5bd81184edf83858fb309c76f2bde24485a72eb4d62f2809758d7b38c746f",
        }),
    "ringnorm": _ida(
        "povelfk/AdvML19-Project-RVM", "fe15c4dc66753005760c5286ec295f1c2afec61c",
        "data/ringnorm/ringnorm",
        {
            "train_data_1": "721fd10b57f4af618f196b5f9778203386b2a532fc7bf72587c9b12c939dd112",
            "train_data_2": "e7eb2ab3219278b0836437179bbaf1598d670e8fd63ecbdefdc446fda04d7508",
            "train_data_3": "b6fee74832cac0a80c9a001be600726bd330c53fefd9ebe54ab2b9e1db2347f0",
            "train_data_4": "5af20f132a818e537e015c0ce08e0360dc7347a7398bb2e8052342223c2aaf7a",
            "train_data_5": "5ef7486544ae0a8a255fedd4540202e396fb1bc88d016dc57f4af83c3ea2b81d",
            "train_data_6": "0aa5f3bcfaffbc54ae3e4004edb194bf39fc1f259c6006e65e04884cd6e01408",
            "train_data_7": "49cb73ee18cfff0f4b181d757bc4ddcc9b7f3e8be54a04f18617b372ad1c5d3e",
            "train_data_8": "a6aedfbca43a67b5afd88c52285a6d379637713bc7dd36c2df74f6363db8d615",
            "train_data_9": "c923972ac2608e5b9166e7b54c7163663207ae40e28113a96bdc0ed5d63cee01",
            "train_data_10": "5c61f221b3a2c9e7fc15b11083501f8cb8c3898727b3f19fc823f582f09bf8ce",
            "train_labels_1": "326248eb16388d091dcf1e4561e85822de994fc432b3643594a0fb4b2225e47d",
            "train_labels_2": "558267cbb75be0f979fb2ebe950191cfb34943afc53ea22991d9e97cb41ea223",
            "train_labels_3": "6d40e9af0d48a4a041a97264bfe6c19a347d0ec0d7f8e4faa50c2d22b5e1ce7d",
            "train_labels_4": "d02b8aba6b92ed93ecd5d9a5de925e48f91d5c52c11fa7a10b99ec33ba1e8ad5",
            "train_labels_5": "eae72ddade8ef54cfa26ca79736733d29e413f7971d5fabd7bba489f5a7b3a07",
            "train_labels_6": "dbfd1ab3746c252a1c5ed7ebaa7cf96ca2ba284a88c26880d2163e0465608d94",
            "train_labels_7": "8a6993961c1ab4884b3b263b656fc8b968ceb1506e03d3f9ba6706814097d239",
            "train_labels_8": "15451b73ae17968795a5f78467d8ef952841f3ddc20e8c2b271d11fa7fbf93e7",
            "train_labels_9": "78a20d628a0d66ee01bd1dc88b5c293979c4c2804add074f1375d2821eafd859",
            "train_labels_10": "ffc7653e863c5e4b2931e9c1f5601bc622db0b221515dabcd1a1de4ef2b51adf",
            "test_data_1": "90317b70d4addebdf2b85a4c676db354a033f890d08a9b5b8b27ba7b53129f30",
            "test_data_2": "5811f226e3798a87c4bceaf4973e9f89b5676b8be233593c6aaa43fe8b7134c8",
            "test_data_3": "7842cafd655376b02efcb0a571e13a10276ed4ac6b03e14e1ca0c3e18857ebeb",
            "test_data_4": "d03755c537faa547999d79047979d27ee02021affc7ea27e36bcf8598235bbde",
            "test_data_5": "53a123afc421b544a370936fd5d0c623917484ea1074a30ff56dd87a2268a858",
            "test_data_6": "f296605423c7f893008c63df8d6f9a8835e5f44d114b77cc908003c0cc2b1d6d",
            "test_data_7": "8cf98683f4a01c8830d3c0d89ad430f1fbf525bf80e2fa8a732fab3f627b6516",
            "test_data_8": "c3bfc54613cc327c5406113834b88db7d46fcb8c34921e1792587e654fc58ab2",
            "test_data_9": "7a329ad8b39e2666de42bd601a3f0f754e2bbc565f997bfdc180c6aa449968ed",
            "test_data_10": "0023206631d82a7190ddd5a469086afdddcb1ff63565aec93fef6b3ebcd16558",
            "test_labels_1": "55799852ef10fe71e27257e590367a8dc6fdb893bdeb584b76d1b5caecdb01d1",
            "test_labels_2": "2f82d1397a39eef8026fe163b6305e52b9b0fe74654288bdeb2a29bfc6a291d6",
            "test_labels_3": "aec11619196234f422abc305aa0343bb87cd5e17782d627a60bbb65e0350718c",
            "test_labels_4": "3ab500106482e99bb9f987944122ab2f6b2182f47e4b44ae4ff6a94785519e63",
            "test_labels_5": "f9805a0915ae332e1f7c284a0f0434a36b9fabec79fc8081cb04dbf51b9fabcb",
            "test_labels_6": "dec1202b3dfeb48622859cde116d2672d4b1fa62dde86c9215281b61836385ba",
            "test_labels_7": "d2c7b9a36ea5dd7543efcffed9ec3f2745c263a98fd837c5dadf425327aa79af",
            "test_labels_8": "cfbd36b8614e43aa8b15d6dbf1a6514f0c2a2c0532bbe98dbcfad61e7939d56a",
            "test_labels_9": "992efd7b624edbf6ef08bc0e904d5f16d3baacbec5f923932e93de119a3bfe13",
            "test_labels_10": "8c8975eb62325d5d1ba925771bbae3156b0b0bba9d67a98f70a8d73100491c02",
        }),
    "titanic": _ida(
        "fernando2393/Relevance-Vector-Machine", "4692830b9a8cf938e6b319be4a42e2a3ddde5457",
        "Classification/datasets/titanic/titanic",
        {
            "train_data_1": "d6cbbc75a78a178c045f91d6aab17c8d00d0f25334cb40866278e38d38073fd8",
            "train_data_2": "6b81306430fbd91002cc417887c366a67eda14dace4d28a684122880dd69b7bc",
            "train_data_3": "6a005981947dbdb2ea2f8469d5695a7c9e89a75a157408b416f67d87b5cbed3c",
            "train_data_4": "445a81466dfe4618dc1eb08c077ffc2c7ec01a1c76770f7d7c8bcaf05d573a63",
            "train_data_5": "af9b96c42946b00edcc2ffdaac9fec5d9ba85acde52f899a2c5187672badeb29",
            "train_data_6": "876d0b9232d15d3ea6332ab18118e13cf2f64ada5b320a8fbc987bc291696cb5",
            "train_data_7": "48787514c79b2c4c45afed9ce7769bbd40b7fb3b202ba2258eeb7d1e1a7c974d",
            "train_data_8": "cc5cf8740c6d8b80dd0683cdd37ba3018ee602b5e173aed4ea11410036e78dd5",
            "train_data_9": "468198ae9eb61886539957e244b2e02f2fc34137dddc6f1887f004397a264e49",
            "train_data_10": "5df0c32e33699dcc2536131fbc9cb2d4d1d5302f446f6600e156b30446fdf4f3",
            "train_labels_1": "b67f6cf3b8bd3bf76cfcfcc223375c40ddff563fc7be3940e091c5dae27151cf",
            "train_labels_2": "9204c11efbd17f9d92cd4172da0a22d5f7bf3c42709eb4196c2083003a79210c",
            "train_labels_3": "890c825a5dc106361fd361e57739ab7c9dd5976f86146f839690dccdd88dc87e",
            "train_labels_4": "83c497b8be07e92d50889264129c2136037d233de2d4c7157301dca52043af05",
            "train_labels_5": "7ca0f92783272d6f59932ae057ceb2ee321ae34c6c2df191c53f8eac8138f732",
            "train_labels_6": "f58da8bba6cffc16e8328cc327dfdfda2136c697840d9ccae5c1440f1136cb08",
            "train_labels_7": "1f662a1a6e9e01d83e3af91690ce9f39e3ec0a254a579c087932eef35dadd3f4",
            "train_labels_8": "a844c79a56f55ad2b2c263e8b1c8b4028ec24db5134f9678c0f12b83e0c0e99e",
            "train_labels_9": "6650fed9c897a879e9775f764f5764ef1855a298c516d6457e7bd81c324f8e4d",
            "train_labels_10": "dd96c60ecc412ba9e2ecc7ec35e582bfbb77e89f56f857615cb8759deb5a7bda",
            "test_data_1": "b1871076c74e5cb77a77752d3466855be3ee5a757d0da377dab5d239bece072d",
            "test_data_2": "c173c89f03f00d27035a27bd041b05ebbfc16898bb33ced4029bb905b88aba04",
            "test_data_3": "cdaec36d42995a6798b7f8a071eafd8eff013942c8c9c2d037a7f67e8bcb4943",
            "test_data_4": "4b21cfed478801350e7da55e88cd4b9098897da933c962581a5be51270456774",
            "test_data_5": "3373a72cb37be10796a8c220c931cbccd59c6af5c73300e77c4025a493a9ec8f",
            "test_data_6": "e683eab6e43f345743ef1310ec46648d7b657b9465e17e0828f2ba123165fa9a",
            "test_data_7": "4a9f07217ac5f42763c61340ae6987b10502295597d92722bc611652b29dcda8",
            "test_data_8": "1b8de933cb7833098fd44b992be3b1871604867cf120f51da0c8b78cea3e2541",
            "test_data_9": "e14f10c29a903f9a0c59e8369dad3fb445ab6d4b6dfeebcf749cf1781a2c6ddf",
            "test_data_10": "7db72c27a7934b3147de473a06e5d01050cb06f5c956aa838f559cdb9781fcf3",
            "test_labels_1": "8b526de41d075401fb92cd711414eedf8a0783621a5ec4194f28c0f7549e9cbf",
            "test_labels_2": "de43325b31c1e7beb2eac704ac1e3e60fed016edf33fad8d09cf8fa1adafced6",
            "test_labels_3": "d5bc4331120db59b080babf6efd782e2f42fbf4e2c9df72c6fc29931d9d4a953",
            "test_labels_4": "0643b83fad60b11e88e3f4401591dec6f0102c47d6785c58fa2e8369112e3d08",
            "test_labels_5": "30afb871be272a24342c7a6babddc6bf6ae07719b42b6484e71212b8f482445d",
            "test_labels_6": "e56a8a6bec58436d7fd4fdb19fa12ca0230f8eaa8151a0175be32dc15106f7a6",
            "test_labels_7": "06f135f12fd4bfb2a7de102b74dba8e48089d4b15e19f70cd0bfa4af6d830ea8",
            "test_labels_8": "01227683d25e04c2cd4c88c174bc418e2a55d68217b783d051b357c734977a45",
            "test_labels_9": "7b7e5b6d6767d3322181573a1662bed84729a7f296bb6d7d54a0b98bdf0e94db",
            "test_labels_10": "11f92c34ce8047abd2863ca15476cbef40871f3a47fb35c5bacdfee55f124ce2",
        }),
    "waveform": _ida(
        "fernando2393/Relevance-Vector-Machine", "4692830b9a8cf938e6b319be4a42e2a3ddde5457",
        "Classification/datasets/waveform/waveform",
        {
            "train_data_1": "95d3bf737b404c5cb8c35d78ef13230af719aeab1eff34e5b81512572d9deb14",
            "train_data_2": "b5c4fa1f8ed20d63f65ba4a9d163d37eb7bff8c0a2808656340c7fc73ed654db",
            "train_data_3": "dda9d14d92aa5b97b8c57476e2104ee26b7b5717b35fe6ed49b733cf3e4bf258",
            "train_data_4": "1d106932c5e89fb57d0ee5989248a12ca41e0c711e36224d9c04714ede4a1263",
            "train_data_5": "c8db5efd8f8cd9466d2f9ea6887e4cd87e843198a1f08538909d57d5538d077b",
            "train_data_6": "17ce5e807a9fce381498bb3df482ff5560fb27fa28fd9778796c4a9ac3271ad9",
            "train_data_7": "eb64691028ca26eb39e9b027cd992801e147663136f2083ad64b687b3bc91542",
            "train_data_8": "299fcde02ab8ba7692142bb624891cdf855a8ea5d0b3b20ca3c4556f06cd5189",
            "train_data_9": "f85fbb9f6441e6e9b052ea27ba6bc8e997dae76784cb9caaa0a3ed763724f2a7",
            "train_data_10": "686881eb13577daa6867bb451aa8a981c90b1e9de357d9de8c323e8456b64766",
            "train_labels_1": "5147bbd2ad8d36c5fffac0f1b89f7004a174651dc80bfa753f31a17e9283831d",
            "train_labels_2": "0051604837e74c9c58850d1fe2bde1115a0d5b9b0ee5599e4cd31500ce23085b",
            "train_labels_3": "a553a1fa86c4c469d4a35411e37f026c4572ade29b02c9bbbb48c9e0802881bf",
            "train_labels_4": "6621d09349d3997a47d9a25c5cbe67a6576455d86a7082bb8ea7edbeb2cca7c9",
            "train_labels_5": "fa61acbefd172605e611bc7297824dfd027564d480e124db1ab93e7bca2d20ce",
            "train_labels_6": "4e246a9271fb546a329816460c7d90285fa9a46b3a823db666ca4468843044be",
            "train_labels_7": "a29475422933971a03e404be24e63267fd4ac8a1266df6f6e94dc7aedb1f23bd",
            "train_labels_8": "3c7a6d3ff75dc05f64e10dc8d6b1c3087a966a909b5ce582efbda68a3624a4e0",
            "train_labels_9": "b66fb14e56f1c541b4177f791ebae88a773e0237d209f268c53888a2e5def2b3",
            "train_labels_10": "b4ff92c53fbe929654fb702fac5cab846a74591a82d895872aedbe19ffb9ba91",
            "test_data_1": "e16e07f1e6f8ed6768fb13b06671c0c6063560406d2fc0e7f4f5451e67fc2a7e",
            "test_data_2": "96dd70f08c200060eaf94d37e03b883a16e89d33ef07050e1c59ca7180f49743",
            "test_data_3": "e4c5b6aa43cd705ea813591149c341ffca22a0d977c8f0cb9ed2600a85468b93",
            "test_data_4": "fca4a9e3ce614a8461de5da108ddee85341a5b026ba4e11ad4f13f7b8eea5c8a",
            "test_data_5": "1443c462eea896e5b1a908607c41639c766c73686fd8cd9b29115bf9e7f364b1",
            "test_data_6": "086dede4f9c44949ee4a27bc33aa9fbd0f7f1c43d352db22ffe995b070e0704c",
            "test_data_7": "4e4e5a246ee1e27450e69c2a10e482fe6f423e0380ae6ef479c43d36b419a999",
            "test_data_8": "c9cb4a80034e255e0d25506b21ba9e1695d7bb79c0b78bfc8ef08ec4b9d4e1af",
            "test_data_9": "ee5513154c4d0d815a485809f7fb0f8b61904991c81f5a729240995173e117b3",
            "test_data_10": "dd1ed1c866be795680e677d338c904e0b5e5c43171643f9c2d8b1820e4a4e783",
            "test_labels_1": "211d973e19911c9d35f0a64905cd0b0c797e9da7ab99c74f68eabd860eb03794",
            "test_labels_2": "c0360c3209a9ee45d0898538cf9f9da1e92cd2c977f0177773ffe26d3968a4d1",
            "test_labels_3": "327d7c4540b330b39c1b0bbd6376602c66676127d650104d0fadb1a34bc8cf5b",
            "test_labels_4": "0f71fe639c7dfab6e47894ea364eade0103dee74fe7d822f6d3969f9472f787e",
            "test_labels_5": "ad45df551439000e7b9500ce598116ca0fe12df6ca3db2e1b487cc06e6442b21",
            "test_labels_6": "49db0a15c45b39fe63826a27a540122d93d2e8ae2d3a1660c4fe1d6626b8bdc4",
            "test_labels_7": "79fa10687da20bad413849375489990503d93ad8a98d4d3ec93d88ce56d0c4df",
            "test_labels_8": "fa0b73faf5750420ee16a1da4063ab7765451df560a62416f37e9f3cec98ea9c",
            "test_labels_9": "2387b9739ccc384ae095feee18d6e206542dfe2f2a906a2703409b257aea3dd1",
            "test_labels_10": "4ebda49eeecd25256f07fb2b3764dd922523fded665f4d376c98c0259c277e89",
        }),
    "diabetis": {"uci": SourceFile(
        "darenr/public_datasets", "b9a67b0154b7d4ae8b576f5996e6d95b12014971",
        "pima-indians-diabetes.csv",
        "f463aa68699b14a786355b886c0714d8d0fd2a6eb4e4678d1643057b5f693ecc")},
    "flare_solar": {"uci": SourceFile(
        "Abhishek-Deshmukh/cs460-perceptron-comparison", "415f231a8a6b5da837765d56560caa611f198e60",
        "flare.data2",
        "1ac3097d050986c1016754c1506117d353561db06f8d774de0111088f19dda0c")},
    "splice": {"uci": SourceFile(
        "seacevedo/SpliceJunctionPrediction", "4661a0ab9cbf5e28ec9d3925d0a26199453af8fc",
        "splice.csv",
        "a8e1f2f76ef4c2393bb5d072c6e94c2db919d9c319a377012b59a5567fe6f5e8")},
    "thyroid": {
        "uci": SourceFile(
            "amritmaj/SVM-Tree", "d7feedb491255e60379f18a082af7810f3b93801",
            "new-thyroid.data",
            "5b3dec98f167da73218d5e9d622fe808e4918953b579c07c2279a7fd4b2b588f"),
        "raetsch_mat": SourceFile(
            *_DEVN913, "twin_datasets/thyroid.mat",
            "25717045132047fc9b6ad0c2d1f9344cdcd0bf990bc496a8de1827ff430b2e8b"),
    },
    "twonorm": {"mat": SourceFile(
        *_DEVN913, "twin_datasets/twonorm.mat",
        "4ad7de2918058533181ee5ac86dafab8f29002f684afe3058ec70f81ece7e2aa")},
    "usps": {"h5": SourceFile(
        "niuers/Learning-From-Data-A-Short-Course", "879a698b960e5867f7c2b11f8938fa89c3d21839",
        "data/usps.h5",
        "734f88c541104a956d88be2c95d03b4a463ffd74ccc2ba9c80841fb98e3fcb36")},
}

#: The names :func:`kpm_reproduce.data.fetch_data` accepts: the 13 Rätsch sets, then "usps".
DATASETS = tuple(sorted(n for n in SOURCES if n != "usps")) + ("usps",)


def source_files(name):
    """The source files of data set ``name`` (a dict role -> :class:`SourceFile`)."""
    if name not in SOURCES:
        raise ValueError(f"unknown dataset {name!r}; known: {', '.join(DATASETS)}")
    return dict(SOURCES[name])
